(int a, int b) two() { a = 1; b = 2; }
int x; int y;
(x, y) = two();
trace(x, y);
