// THIS-SCRIPT-SHOULD-FAIL
(int r) f () {
  global int g = 1;
  r = g;
}
trace(f());
