type file;
app (file f) gen (string msg) {
  echo msg stdout=@filename(f);
}
iterate i {
  file tmp <test_mapper; file=@strcat("296-iter.", i, ".tmp"), temp="true">;
  trace("Iteration", i);
  tmp = gen(@strcat("Iteration ", i));
} until (i > 2);
