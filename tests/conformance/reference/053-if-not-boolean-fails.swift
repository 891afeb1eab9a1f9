// THIS-SCRIPT-SHOULD-FAIL
int x = 1;
if (x) {
  trace("yes");
}
