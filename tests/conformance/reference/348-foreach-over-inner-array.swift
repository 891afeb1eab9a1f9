int m[][];
m[0][0] = 1;
m[0][1] = 2;
m[1][0] = 3;
foreach v in m[0] {
  trace("row0", v);
}
trace(length(m[1]));
