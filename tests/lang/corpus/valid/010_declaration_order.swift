int c;
c = b;
int b = a;
int a = 8645;
trace(c);
