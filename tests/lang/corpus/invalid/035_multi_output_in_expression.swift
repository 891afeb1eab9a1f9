// expect: Procedure two must have exactly one return value to be used in an expression.
(int a, int b) two() { a = 1; b = 2; }
int x = two();
