// An app with two outputs; both appear at their mapped paths.
type file;
app (file a, file b) two(string x) {
    sh "-c" "echo $0 > $1; echo $0$0 > $2" x @a @b;
}
file a <"005-two-outputs.out">;
file b <"results/005-b.txt">;
(a, b) = two("z");
