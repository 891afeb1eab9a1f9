// THIS-SCRIPT-SHOULD-FAIL
(int r) f (int a) {
  a = 2;
  r = a;
}
trace(f(1));
