// THIS-SCRIPT-SHOULD-FAIL
tracef("%x\n", 3);
