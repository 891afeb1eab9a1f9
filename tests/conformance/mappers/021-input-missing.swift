// THIS-SCRIPT-SHOULD-FAIL
type file;
app (file o) cat(file i) { cat @i stdout=@o; }
file f <"nonexistent.txt">;
file o = cat(f);
