// THIS-SCRIPT-SHOULD-FAIL
type S { int a; }
S s;
s.a = 1;
trace(s.b);
