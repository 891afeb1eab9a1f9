// THIS-SCRIPT-SHOULD-FAIL
int top = 3;
(int r) f () {
  r = top + 1;
}
trace(f());
