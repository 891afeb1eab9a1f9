type file;
app (file o) put (int i) {
  echo i stdout=@o;
}
string tag = arg("tag", "run");
file outs[] <simple_mapper; prefix=strcat("262-", tag, "-"), suffix=".dat">;
foreach i in [0:1] {
  outs[i] = put(i);
}
