for (int64_t a = 0; a < KH; ++a)
    for (int64_t b = 0; b < KW; ++b) result = fmaxf(result, x(a, b));
