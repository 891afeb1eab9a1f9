// expect: Procedure two has no output parameter named 'c'
(int a, int b) two() { a = 1; b = 2; }
int x, y;
(x = c, y) = two();
