int a[];
int x = a[2] + 1;
trace(x);
a[2] = 41;
