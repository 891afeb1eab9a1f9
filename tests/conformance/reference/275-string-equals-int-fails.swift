// THIS-SCRIPT-SHOULD-FAIL
trace("a" == 1);
