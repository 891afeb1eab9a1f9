int a[];
foreach i in [0:99] { a[i] = i; }
int s[];
foreach v, i in a { s[i] = v * 2; }
trace(length(s), s[99]);
