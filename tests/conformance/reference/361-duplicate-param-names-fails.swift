// THIS-SCRIPT-SHOULD-FAIL
(int r) f (int a, int a) {
  r = a;
}
trace(f(1, 2));
