// THIS-SCRIPT-SHOULD-FAIL
int a = 1;
if (true) {
  int a = 2;
  trace(a);
}
