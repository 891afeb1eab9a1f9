type file;
type pair { file a; file b; }
app (file o) join (pair p) {
  cat @p.a @p.b stdout=@o;
}
pair p <simple_mapper; prefix="149-", suffix=".txt">;
file o <"149-struct-of-files-to-app.out">;
o = join(p);
