// expect: Variable a, on line 3, was already defined on line 2
int a = 1;
int a = 2;
