// User Guide 2.4: y=p(x); z=q(y);
type file;
app (file o) p(file i) { p @i @o; }
app (file o) q(file i) { q @i @o; }
file x <"x">; file y; file z;
y=p(x); z=q(y);
