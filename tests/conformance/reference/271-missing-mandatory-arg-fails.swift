// THIS-SCRIPT-SHOULD-FAIL
(int r) f (int a, int b) { r = a + b; }
trace(f(1));
