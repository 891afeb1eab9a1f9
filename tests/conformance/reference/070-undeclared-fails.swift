// THIS-SCRIPT-SHOULD-FAIL
int a = b + 1;
trace(a);
