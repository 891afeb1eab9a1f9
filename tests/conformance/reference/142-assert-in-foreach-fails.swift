// THIS-SCRIPT-SHOULD-FAIL
foreach i in [1:3] {
  assert(i < 3, "too big");
}
