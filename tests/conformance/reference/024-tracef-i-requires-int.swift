// THIS-SCRIPT-SHOULD-FAIL
float x = 2.5;
tracef("%i\n", x);
