int m[][];
foreach i in [0:2] {
  foreach j in [0:i] {
    m[i][j] = j;
  }
}
foreach row, i in m {
  trace(i, length(row));
}
