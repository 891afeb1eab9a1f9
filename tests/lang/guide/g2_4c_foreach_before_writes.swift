// User Guide 2.4: foreach over an array written later
type file;
app (file o) p(file i) { p @i @o; }
app (file o) r() { r @o; }
app (file o) s() { s @o; }
file a[]; file b[]; foreach v,i in a { b[i] = p(v); } a[0] = r(); a[1] = s();
