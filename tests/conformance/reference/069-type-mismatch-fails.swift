// THIS-SCRIPT-SHOULD-FAIL
int x = "hello";
trace(x);
