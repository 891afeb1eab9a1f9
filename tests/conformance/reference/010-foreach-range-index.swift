foreach v, i in [10:12] {
  trace(i, v);
}
