type S { int vals[]; string name; }
(int n) count (S s) {
  n = length(s.vals);
}
S arr[];
foreach i in [0:1] {
  arr[i].name = "s" + i;
  foreach j in [0:i] {
    arr[i].vals[j] = j;
  }
}
foreach s, i in arr {
  trace(s.name, count(s));
}
