foreach x in [0.5:1.5:0.5] {
  trace(x);
}
