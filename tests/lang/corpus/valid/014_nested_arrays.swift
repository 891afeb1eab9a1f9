type file;
int m[][];
m[0][0] = 1;
m[0][1] = 2;
m[1][0] = 3;
int row[] = m[0];
trace(row[1]);
file f[][];
