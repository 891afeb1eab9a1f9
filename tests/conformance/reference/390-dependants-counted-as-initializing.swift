// THIS-SCRIPT-SHOULD-FAIL
// Swift 0.96 (libexec/swift.k `execute`) logs JOB_INIT for every app call, also for a
// call skipped because an input failed, and the call's ticker state stays
// "Initializing"; reference 2.6 quotes the end of such a run as
// "Final status: <date>  Initializing:1  Failed:1".
type file;
app (file o) bad() { sh "-c" "exit 1" stdout=@o; }
app (file o) cp(file i) { cat @i stdout=@o; }
file a <"390-a.txt">;
a = bad();
file b[] <simple_mapper; prefix="390-b", suffix=".txt">;
foreach i in [0:2] { b[i] = cp(a); }
