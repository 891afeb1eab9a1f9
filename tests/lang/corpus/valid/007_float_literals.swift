float a = 1.5;
float b = 1e2;
float c = .9;
float d = .9e3;
float e = 987E-1;
float f = 6e+3;
trace(a, b, c, d, e, f);
