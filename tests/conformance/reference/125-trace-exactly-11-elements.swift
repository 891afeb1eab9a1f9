int a[] = [0:10];
trace(a);
int b[] = [0:9];
trace(b);
