// THIS-SCRIPT-SHOULD-FAIL
foreach x in [0.0:1.0] {
  trace(x);
}
