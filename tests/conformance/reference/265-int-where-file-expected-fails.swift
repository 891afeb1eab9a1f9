// THIS-SCRIPT-SHOULD-FAIL
type file;
app (file o) copy (file i) { cat @i stdout=@o; }
file o <"265-o.txt">;
o = copy(3);
