int a[] = [1:10:3];
trace(a);
