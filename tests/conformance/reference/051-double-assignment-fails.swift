// THIS-SCRIPT-SHOULD-FAIL
int a;
a = 1;
a = 2;
trace(a);
