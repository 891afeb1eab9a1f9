int a = 1;
int b = a + 1;
int c = b + 1;
int d = c + 1;
trace(d);
