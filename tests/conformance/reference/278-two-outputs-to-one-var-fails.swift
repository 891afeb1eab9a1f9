// THIS-SCRIPT-SHOULD-FAIL
(int a, int b) two () { a = 1; b = 2; }
int x = two();
trace(x);
