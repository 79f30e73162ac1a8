float t1 = x + bias;
float t2 = t1 * scale;
