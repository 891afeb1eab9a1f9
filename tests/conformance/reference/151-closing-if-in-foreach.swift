(int r) f (int[] b) {
  foreach v in b {
    trace("item", v);
  }
  r = 1;
}
int a[];
int[] r;
foreach i in [0:1] {
  if (i == 0) {
    a[i] = 1;
  } else {
    a[i] = 2;
  }
  r[i] = f(a);
}
