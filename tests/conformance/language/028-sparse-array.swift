int a[];
a[100] = 1; a[-3] = 2; a[7] = 3;
trace(a);
foreach v, k in a { trace(k); }
