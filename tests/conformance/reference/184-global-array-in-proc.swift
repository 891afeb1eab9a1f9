global string colors[] = ["red", "green", "blue"];
(string r) pick (int i) {
  r = colors[i];
}
trace(pick(2), pick(0));
