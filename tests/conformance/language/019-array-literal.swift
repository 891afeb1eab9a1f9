int a[] = [10, 20, 30];
trace(a, a[1]);
