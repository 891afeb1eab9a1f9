// expect: Uninitalized variable: a
int a;
trace(a);
