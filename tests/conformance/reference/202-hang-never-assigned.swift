// THIS-SCRIPT-SHOULD-FAIL
int i;
int j;
j = i;
trace(j);
