float acc = 0.0f;
for (int64_t k = 0; k < K; ++k) acc += a(k) * t0(k);
result = acc;
