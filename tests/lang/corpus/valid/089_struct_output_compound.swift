type file;
type pair { file a; file b; }
app (file o) mk(string s) { echo s stdout=@o; }
(pair p) mkpair() {
    p.a = mk("a");
    p.b = mk("b");
}
pair q = mkpair();
