float acc = 0.0f;
for (int64_t c = 0; c < C; ++c)
    for (int64_t k0 = 0; k0 < K0; ++k0)
        for (int64_t k1 = 0; k1 < K1; ++k1) acc += x(c, k0, k1) * conv_weight(c, k0, k1);
result = acc;
