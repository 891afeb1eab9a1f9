// THIS-SCRIPT-SHOULD-FAIL: a non-zero exit code fails the call; exit code 2.
type file;
app (file o) bad() {
    sh "-c" "echo partial; exit 7" stdout=@o;
}
file o <"007-nonzero-exit.out">;
o = bad();
