// expect: 3:5: Variable b was not declared in this scope.
int a;
a = b + 1;
