// expect: foreach can only iterate over an array, not over a value of type int
int n = 3;
foreach i in n { trace(i); }
