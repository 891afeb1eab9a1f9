(int r) count (int[] b) {
  foreach i in b {
    trace("item", i);
  }
  r = 1;
}
int[] a;
int r;
if (true) {
  if (true) {
    a[0] = 1;
  }
  r = count(a);
} else {
  a[1] = 1;
}
trace("count", r);
