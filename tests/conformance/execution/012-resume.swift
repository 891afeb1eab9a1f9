// -resume: calls whose outputs are listed in the restart log are skipped.  The log lists
// the outputs of i = 1, 2, 3 (their files exist from the "previous run").
type file;
app (file o) step(int i) {
    sh "-c" "echo $0 >> 012.calls; echo new-$0" i stdout=@o;
}
file f[] <simple_mapper; location="res", prefix="r", suffix=".txt">;
foreach i in [1:5] {
    f[i] = step(i);
}
