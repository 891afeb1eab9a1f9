int a[] = [1, 2, 3];
int b[];
b = a;
trace(b, length(b));
