int[] a;
foreach i in a {
  trace(i);
}
trace("done", length(a));
