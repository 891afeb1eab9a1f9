// THIS-SCRIPT-SHOULD-FAIL
int a; int b;
a = b + 1;
b = a + 1;
trace(a);
