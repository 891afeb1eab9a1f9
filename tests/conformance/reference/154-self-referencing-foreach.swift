int[] a;
a[3] = 1;
foreach v, k in a {
  if (k < 20) {
    a[k + 10] = 1;
  }
}
foreach i in [0:1] {
  a[i] = 1;
}
trace(length(a));
