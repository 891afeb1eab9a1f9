int a[];
int n = length(a);
trace(n);
a[0] = 1;
a[1] = 2;
