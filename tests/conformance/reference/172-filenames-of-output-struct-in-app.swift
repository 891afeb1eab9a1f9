type file;
type S { file a; file b; }
app (S s) gen () {
  touch @filenames(s);
}
S x <simple_mapper; prefix="172-", suffix=".txt">;
x = gen();
trace(@x.a);
