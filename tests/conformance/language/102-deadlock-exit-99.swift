// THIS-SCRIPT-SHOULD-FAIL (the hang detector reports the cycle)
int a; int b;
a = b + 1;
b = a + 1;
trace(a);
