// expect: Duplicate parameter: 'a'
(int r) f(int a=1) { r = a; }
int x = f(a=1, a=2);
