// THIS-SCRIPT-SHOULD-FAIL
string v = arg("required");
trace(v);
