// THIS-SCRIPT-SHOULD-FAIL
int[auto] array;
array[0] = 1;
