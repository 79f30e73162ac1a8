float m = -INFINITY;
for (int64_t k = 0; k < R; ++k) m = fmaxf(m, x(k));
result = m;
