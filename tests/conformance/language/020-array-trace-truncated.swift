int a[] = [0:15];
trace(a);
