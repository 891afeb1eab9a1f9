int a, b, c;
c = b;
b = a;
a = 8645;
trace(c);
