// expect: stdout must be a string
type file;
app (file o) f() { echo "x" stdout=o; }
