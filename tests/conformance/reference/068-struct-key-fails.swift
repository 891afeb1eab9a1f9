// THIS-SCRIPT-SHOULD-FAIL
type S { int a; }
int m[S];
