// expect: 'false' is a reserved word
type file;
app (file o) f() { false stdout=@o; }
