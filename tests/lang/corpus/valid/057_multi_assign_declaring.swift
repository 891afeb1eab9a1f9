(int first, int second) two() { first = 1; second = 2; }
(int a, int b) = two();
trace(a, b);
