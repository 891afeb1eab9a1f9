// THIS-SCRIPT-SHOULD-FAIL
(int r) f (widget w) {
  r = 1;
}
trace("x");
