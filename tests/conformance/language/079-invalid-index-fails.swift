// THIS-SCRIPT-SHOULD-FAIL
int a[] = [1, 2];
trace(a[4]);
