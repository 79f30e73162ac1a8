float m = -INFINITY;
for (int64_t k = 0; k < R; ++k) m = fmaxf(m, x(k));
float s = 0.0f;
for (int64_t k = 0; k < R; ++k) s += expf(x(k) - m);
for (int64_t k = 0; k < R; ++k) out(k) = expf(x(k) - m) / s;
