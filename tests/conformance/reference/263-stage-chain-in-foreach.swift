type file;
app (file o) gen (int i) {
  seq i stdout=@o;
}
app (file o) count (file i) {
  wc "-l" stdin=@i stdout=@o;
}
int totals[];
foreach i in [1:3] {
  file raw;
  raw = gen(i * 2);
  file c = count(raw);
  totals[i] = readData(c);
}
trace(totals);
