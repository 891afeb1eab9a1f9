int a[];
a[0] = 1;
foreach i in [1:6] {
  a[i] = a[i - 1] * 2;
}
trace(a[6], length(a));
