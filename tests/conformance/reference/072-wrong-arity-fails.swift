// THIS-SCRIPT-SHOULD-FAIL
(int r) f (int x) { r = x; }
trace(f(1, 2));
