(string r) classify (int x) {
  if (x < 0) {
    r = "negative";
  } else if (x == 0) {
    r = "zero";
  } else {
    r = "positive";
  }
}
foreach v in [-1:1] {
  trace(v, classify(v));
}
