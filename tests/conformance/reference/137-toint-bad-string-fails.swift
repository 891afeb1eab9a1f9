// THIS-SCRIPT-SHOULD-FAIL
int x = toInt("abc");
trace(x);
