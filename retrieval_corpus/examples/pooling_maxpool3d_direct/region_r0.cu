for (int64_t a = 0; a < KD; ++a)
    for (int64_t b = 0; b < KH; ++b)
        for (int64_t c = 0; c < KW; ++c) result = fmaxf(result, x(a, b, c));
