// THIS-SCRIPT-SHOULD-FAIL
type file;
file f <"279-x.txt">;
int n = f;
trace(n);
