type S { int vals[]; }
S arr[];
foreach i in [0:1] {
  foreach j in [0:2] {
    arr[i].vals[j] = i + j;
  }
}
trace(length(arr[1].vals), arr[1].vals);
