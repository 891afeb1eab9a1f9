int a[]; int b[];
foreach v, i in a { b[i] = v * 10; }
a[0] = 1; a[1] = 2; a[5] = 3;
trace(b);
