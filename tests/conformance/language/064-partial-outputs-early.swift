(int a, int b) slow() { a = 1; b = a + 1; }
int x; int y;
(x, y) = slow();
trace(x);
trace(y);
