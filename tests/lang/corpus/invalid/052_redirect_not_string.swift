// expect: stdout must be a string or a file
type file;
app (file o) f(file xs[]) { echo "x" stdout=xs; }
