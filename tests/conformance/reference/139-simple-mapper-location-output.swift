type file;
app (file o) num (int i) {
  echo i stdout=@o;
}
file outs[] <simple_mapper; location="139-results", prefix="r", suffix=".dat">;
foreach i in [1:3] {
  outs[i] = num(i * 10);
}
