int t[string][string];
t["a"]["x"] = 1;
t["a"]["y"] = 2;
t["b"]["x"] = 3;
foreach row, r in t {
  foreach v, c in row {
    trace(r, c, v);
  }
}
