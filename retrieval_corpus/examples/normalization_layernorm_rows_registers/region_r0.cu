double sum = 0.0;
for (int64_t k = 0; k < R; ++k) sum += x(k);
const float mean = (float)(sum / R);
double sq = 0.0;
for (int64_t k = 0; k < R; ++k) {
    const float d = x(k) - mean;
    sq += (double)d * d;
}
const float inv = rsqrtf((float)(sq / R) + 1e-05f);
for (int64_t k = 0; k < R; ++k) out(k) = (x(k) - mean) * inv * norm_weight(k) + norm_bias(k);
