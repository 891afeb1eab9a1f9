int a[];
a[-5] = 1;
a[-10] = 2;
a[0] = 3;
foreach v, k in a {
  trace(k, v);
}
trace(a);
