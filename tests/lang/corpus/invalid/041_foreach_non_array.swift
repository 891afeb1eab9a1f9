// expect: You can iterate through an array structure only (not int)
int n = 3;
foreach i in n { trace(i); }
