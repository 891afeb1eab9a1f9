int m[][];
foreach i in [0:2] {
    foreach j in [0:2] {
        m[i][j] = i * j;
    }
}
