// THIS-SCRIPT-SHOULD-FAIL
type file;
app (file o) nothing () {
}
file o <"363-o.txt">;
o = nothing();
