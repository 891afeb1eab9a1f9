type file;
type pair { file a; file b; }
app (pair p) mk() { mk @p.a @p.b; }
pair q = mk();
