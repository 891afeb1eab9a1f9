float[string] a;
a["one"] = 0.2;
a["two"] = 0.4;
a["three"] = 0.6;
trace(a);
foreach v, k in a {
  trace(k, v);
}
