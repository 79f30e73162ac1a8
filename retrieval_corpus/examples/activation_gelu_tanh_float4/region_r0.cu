float t1 = kg_gelu_tanh(x);
