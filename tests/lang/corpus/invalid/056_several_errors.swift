// expect: Variable u was not declared in this scope.
// expect: You cannot assign value of type string to a variable of type int
// expect: No function or procedure 'nope' found.
int a = u;
int b = "s";
nope();
