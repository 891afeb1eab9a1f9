// expect: Variable top was not declared in this scope.
int top = 1;
(int r) f() { r = top; }
trace(f());
