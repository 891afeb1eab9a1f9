int a[];
a[0] = 0;
foreach v, i in a { if (i < 5) { a[i + 1] = v + 1; } }
a[10] = 99;
trace(length(a), a[10]);
int b[]; int c[];
foreach x, k in b { c[k] = x * 2; }
foreach j in [0:3] { b[j] = j; }
trace(length(c));
(int r[]) gen(int n) { foreach i in [0:n] { r[i] = i; } }
int g[] = gen(4);
int h[];
foreach q, k in g { h[k] = length(g) + q; }
trace(h);
