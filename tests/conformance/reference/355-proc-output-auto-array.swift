(int out[auto]) gen (int n) {
  foreach i in [1:n] {
    out << i * 10;
  }
}
int r[auto] = gen(3);
trace(length(r));
