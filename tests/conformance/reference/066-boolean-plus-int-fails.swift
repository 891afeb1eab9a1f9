// THIS-SCRIPT-SHOULD-FAIL
trace(true + 1);
