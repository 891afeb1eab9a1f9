int a[];
foreach i in [0:9] { a[i] = i; }
trace(length(a));
