type file;
type pair { file a; file b; }
pair p <simple_mapper; prefix="p">;
string n = @p.a;
string m = @filename(p.b);
trace(n, m);
