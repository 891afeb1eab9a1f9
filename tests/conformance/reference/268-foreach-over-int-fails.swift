// THIS-SCRIPT-SHOULD-FAIL
int x = 3;
foreach v in x {
  trace(v);
}
