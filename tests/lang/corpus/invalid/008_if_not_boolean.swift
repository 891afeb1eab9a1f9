// expect: Condition in if statement has to be of boolean type.
int x = 1;
if (x) { trace(x); }
