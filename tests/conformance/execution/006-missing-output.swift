// THIS-SCRIPT-SHOULD-FAIL: exit 0 without the declared output is a failure, and the
// output that was written is not moved into place (no partial results).
type file;
app (file a, file b) half() {
    sh "-c" "echo a > $0" @a;
}
file a <"006-a.txt">;
file b <"006-b.txt">;
(a, b) = half();
