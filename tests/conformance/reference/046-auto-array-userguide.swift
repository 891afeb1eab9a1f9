int[auto] array;
foreach i in [1:100] {
  array << (i*2);
}
int n = length(array);
trace(n);
int[auto] a;
int[auto] b;
a << 1;
a << 2;
foreach v, k in a {
  b[k] = a[k] * 2;
}
foreach v in b {
  trace(v);
}
