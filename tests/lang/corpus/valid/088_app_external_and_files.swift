type file;
app (external done) notify(file f) { notify @f; }
file f <"f.txt">;
external d = notify(f);
