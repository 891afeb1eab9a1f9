int m[][];
foreach i in [0:3] {
  foreach j in [0:3] {
    if (i == 0 || j == 0) {
      m[i][j] = 1;
    } else {
      m[i][j] = m[i - 1][j] + m[i][j - 1];
    }
  }
}
trace(m[3][3]);
