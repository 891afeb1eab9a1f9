// expect: Variable a is written to in two different locations
int a;
a = 1;
a = 2;
