// THIS-SCRIPT-SHOULD-FAIL
(int r) f (int x) { r = x; }
(int r) f (int x) { r = x + 1; }
trace(f(1));
