// THIS-SCRIPT-SHOULD-FAIL: an app that always fails is attempted 1 + executionRetries times.
type file;
app (file o) never() {
    sh "-c" "echo x >> ../../../../../009.attempts; exit 1" stdout=@o;
}
file o <"009-o.txt">;
o = never();
