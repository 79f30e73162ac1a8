float t1 = t0 + conv_bias_view;
float t2 = kg_hardswish(t1);
float t3 = t2 * scale;
