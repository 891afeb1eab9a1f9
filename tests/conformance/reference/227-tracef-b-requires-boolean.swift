// THIS-SCRIPT-SHOULD-FAIL
tracef("%b\n", 1);
