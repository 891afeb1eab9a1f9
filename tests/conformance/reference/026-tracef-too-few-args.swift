// THIS-SCRIPT-SHOULD-FAIL
tracef("%s %s\n", "one");
