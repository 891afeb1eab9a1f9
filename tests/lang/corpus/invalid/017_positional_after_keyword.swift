// expect: positional argument after keyword arguments
(int r) f(int a=1, int b=2) { r = a + b; }
int x = f(a=1, 2);
