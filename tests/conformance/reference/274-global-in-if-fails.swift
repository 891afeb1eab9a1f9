// THIS-SCRIPT-SHOULD-FAIL
if (true) {
  global int g = 1;
}
