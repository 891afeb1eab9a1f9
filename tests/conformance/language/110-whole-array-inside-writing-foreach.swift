// the array is used whole inside the foreach that writes it: it closes when the
// writes (the if in each iteration) are done, not when the iterations are
(int r) count(int[] b) { r = length(b); }
int a[];
int n[];
foreach i in [0:2] {
  if (i == 0) { a[i] = 1; } else { a[i] = 2; }
  n[i] = count(a);
}
trace(n);
