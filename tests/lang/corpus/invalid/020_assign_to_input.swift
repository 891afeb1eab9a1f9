// expect: Cannot assign to input parameter a of procedure f
(int r) f(int a) { a = 2; r = a; }
trace(f(1));
