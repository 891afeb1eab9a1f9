int out[];
foreach i in [0:3] {
  if (i %% 2 == 0) {
    out[i] = i * 10;
  } else {
    out[i] = -i;
  }
}
trace(out);
