int m[][];
foreach i in [0:2] {
  foreach j in [0:1] {
    m[i][j] = i * 10 + j;
  }
}
trace(m);
