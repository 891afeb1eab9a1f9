// THIS-SCRIPT-SHOULD-FAIL
type S { int a; string a; }
S s;
