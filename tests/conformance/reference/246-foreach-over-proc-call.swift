(int r[]) squares (int n) {
  foreach i in [0:n - 1] {
    r[i] = i * i;
  }
}
foreach v, k in squares(4) {
  trace(k, v);
}
