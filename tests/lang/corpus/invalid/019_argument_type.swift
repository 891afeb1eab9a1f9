// expect: Parameter type mismatch in call to f: parameter a has type int, argument has type string
(int r) f(int a) { r = a; }
int x = f("s");
