// expect: Variable a is written to in two different locations
int a = 1;
a = 2;
