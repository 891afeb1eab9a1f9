type file;
(int r) double (int x) {
  r = x * 2;
}
