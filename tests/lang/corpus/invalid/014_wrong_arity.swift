// expect: Wrong number of procedure input arguments: specified 2 and should be 1
(int r) f(int a) { r = a; }
int x = f(1, 2);
