// THIS-SCRIPT-SHOULD-FAIL
int x = 1;
if (x == 1) trace("one");
