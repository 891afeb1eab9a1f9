int a[];
a[0] = 0;
foreach v, i in a { if (i < 5) { a[i + 1] = v + 1; } }
trace(length(a), a[5]);
