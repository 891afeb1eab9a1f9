type file;
app (file o) gen (int i) {
  echo i stdout=@o;
}
file fs[auto];
foreach i in [1:3] {
  fs << gen(i);
}
int n = length(fs);
trace(n);
