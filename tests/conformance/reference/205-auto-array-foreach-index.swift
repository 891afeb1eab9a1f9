int a[auto];
foreach v in [0:4] {
  a << v * v;
}
int total[auto];
foreach v, i in a {
  total << a[i] + v;
}
int n = length(total);
trace(n);
