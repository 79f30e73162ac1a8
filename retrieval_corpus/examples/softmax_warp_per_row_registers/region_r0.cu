out(k) = expf(x(k) - row_max) / row_sum;
