foreach v, i in [5:9:2] {
  trace(i, v);
}
