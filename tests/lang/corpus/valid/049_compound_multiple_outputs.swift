type file;
app (file o) A1() { touch @o; }
app (file o) A2() { touch @o; }
app (file o) S(file i) { cp @i @o; }
(file a, file b) A() {
    a = A1();
    b = A2();
}
file x, y, s, t;
(x, y) = A();
s = S(x);
t = S(y);
