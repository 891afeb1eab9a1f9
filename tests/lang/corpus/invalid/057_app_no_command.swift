// expect: App procedure f has no command line
type file;
app (file o) f() { }
