// THIS-SCRIPT-SHOULD-FAIL: with lazyErrors independent calls still run, dependants of
// the failed call are skipped, and the run exits 2 at the end.
type file;
app (file o) run(string s) {
    sh "-c" s stdout=@o;
}
app (file o) copy(file i) {
    cat @i stdout=@o;
}
file bad <"010-bad.txt">;
file after <"010-after.txt">;
file good <"010-lazy-errors.out">;
bad = run("exit 1");
after = copy(bad);
good = run("sleep 0.3; echo independent");
