// expect: Wrong number of procedure output arguments: specified 3 and should be 2
(int a, int b) two() { a = 1; b = 2; }
int x, y, z;
(x, y, z) = two();
