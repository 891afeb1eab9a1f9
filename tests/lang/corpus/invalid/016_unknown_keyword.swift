// expect: Formal argument c doesn't exist (procedure f)
(int r) f(int a, int b=2) { r = a + b; }
int x = f(1, c=3);
