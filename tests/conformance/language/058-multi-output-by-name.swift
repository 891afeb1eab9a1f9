(int a, int b) two() { a = 1; b = 2; }
int x; int y;
(y = b, x = a) = two();
trace(x, y);
