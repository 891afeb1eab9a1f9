// THIS-SCRIPT-SHOULD-FAIL
int z = 0;
trace(5 %/ z);
