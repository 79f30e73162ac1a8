double acc = 0.0;
for (int64_t k = 0; k < K; ++k) acc += (double)x(k) * linear_weight(k);
result += (float)acc;
