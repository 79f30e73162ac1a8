float t1 = -0.5f * x;
float t2 = t1 * x;
float t3 = expf(t2);
float t4 = cosf(y);
float t5 = t3 * t4;
float t6 = 0.1f * x;
float t7 = t5 + t6;
