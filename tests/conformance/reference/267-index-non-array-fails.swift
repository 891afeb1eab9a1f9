// THIS-SCRIPT-SHOULD-FAIL
int x = 3;
trace(x[0]);
