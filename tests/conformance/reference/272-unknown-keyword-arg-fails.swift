// THIS-SCRIPT-SHOULD-FAIL
(int r) f (int a, int b = 2) { r = a + b; }
trace(f(1, c = 3));
