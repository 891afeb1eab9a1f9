// expect: x is not an array (type int); it cannot be indexed
int x = 1;
int y = x[0];
