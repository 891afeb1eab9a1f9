type S { int xs[auto]; }
S arr[];
foreach i in [0:1] {
  arr[i].xs << i;
  arr[i].xs << i + 1;
}
trace(length(arr[1].xs));
