int a[] = [0:15];
trace(a);
int b[] = [0:10];
trace(b);
int c[] = [0:9];
trace(c);
