(int first, int second) two() { first = 1; second = 2; }
int a, b;
(a, b) = two();
int c, d;
(c = second, d = first) = two();
trace(a, b, c, d);
