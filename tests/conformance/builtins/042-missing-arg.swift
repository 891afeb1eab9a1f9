// THIS-SCRIPT-SHOULD-FAIL
trace(arg("nope"));
