// expect: Illegal keyword argument: 'c'
(int r) f(int a, int b=2) { r = a + b; }
int x = f(1, c=3);
