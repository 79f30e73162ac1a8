for (int64_t k = 0; k < K; ++k) result += a(k) * t0(k);
