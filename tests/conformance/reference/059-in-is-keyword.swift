// THIS-SCRIPT-SHOULD-FAIL
int in;
in = 1;
