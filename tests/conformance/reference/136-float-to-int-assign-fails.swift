// THIS-SCRIPT-SHOULD-FAIL
int x = 7 / 2;
trace(x);
