// THIS-SCRIPT-SHOULD-FAIL
(int a) f (int a) {
  a = 1;
}
trace(f(1));
