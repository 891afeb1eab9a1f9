int a[] = [1, 2, 3];
int b[];
b[0] = a[0];
b[1] = a[2];
trace(a[1], b[0]);
