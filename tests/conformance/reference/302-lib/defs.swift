type file;
(int r) triple (int x) {
  r = x * 3;
}
