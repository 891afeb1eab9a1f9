// THIS-SCRIPT-SHOULD-FAIL
trace("abc);
