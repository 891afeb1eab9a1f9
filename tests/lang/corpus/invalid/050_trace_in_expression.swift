// expect: Procedure trace has no return value and cannot be used in an expression
int x = trace(1);
