// User Guide 2.5: compound procedure with two outputs
type file;
app (file o) A1() { a1 @o; }
app (file o) A2() { a2 @o; }
app (file o) S(file i) { s @i @o; }
(file a, file b) A() { a = A1(); b = A2(); } file x, y, s, t; (x,y) = A(); s = S(x); t = S(y);
