// expect: Wrong type for parameter number 0, expected int, got string (in call to f)
(int r) f(int a) { r = a; }
int x = f("s");
