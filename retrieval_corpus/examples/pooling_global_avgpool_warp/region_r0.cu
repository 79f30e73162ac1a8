double acc = 0.0;  // 784 terms: summed in double
for (int64_t k = 0; k < R; ++k) acc += x(k);
result = (float)acc;
