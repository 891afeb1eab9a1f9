// THIS-SCRIPT-SHOULD-FAIL
int x = 1;
switch (x) {
  case 1:
    trace("one");
    break;
  default:
    trace("other");
}
