int a = 1, b = 2, c;
c = a + b;
trace(a, b, c);
