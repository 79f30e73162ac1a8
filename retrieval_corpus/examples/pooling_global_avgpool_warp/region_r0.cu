double acc = 0.0;  // 784 terms: summed in double
for (int64_t a = 0; a < KH; ++a)
    for (int64_t b = 0; b < KW; ++b) acc += x(a, b);
result = (float)acc;
