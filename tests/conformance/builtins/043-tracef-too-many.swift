// THIS-SCRIPT-SHOULD-FAIL
tracef("%i %i\n", 1);
