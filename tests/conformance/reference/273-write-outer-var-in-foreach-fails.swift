// THIS-SCRIPT-SHOULD-FAIL
int total;
foreach i in [1:3] {
  total = i;
}
trace(total);
