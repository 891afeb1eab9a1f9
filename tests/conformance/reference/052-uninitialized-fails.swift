// THIS-SCRIPT-SHOULD-FAIL
int a;
trace(a);
