type file;
app (file f) gen (string msg) {
  echo msg stdout=@filename(f);
}
foreach i in [0:3] {
  file tmp <test_mapper; file=@strcat("295-scope.", i, ".tmp"), temp="true">;
  tmp = gen(@strcat("Iteration ", i));
}
