// THIS-SCRIPT-SHOULD-FAIL: an executable not on PATH fails the call (exit 2).
type file;
app (file o) missing() {
    nosuchprogramxyz stdout=@o;
}
file o <"014-o.txt">;
o = missing();
