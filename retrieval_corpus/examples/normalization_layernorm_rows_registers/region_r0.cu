out(k) = (x(k) - row_mean) * row_rstd * norm_weight(k) + norm_bias(k);
