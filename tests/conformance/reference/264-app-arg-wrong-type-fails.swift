// THIS-SCRIPT-SHOULD-FAIL
type file;
app (file o) f (int i) { echo i stdout=@o; }
file o <"264-o.txt">;
o = f("three");
