// expect: Parameter type mismatch in call to f: parameter n has type int, argument has type string
type file;
app (file o) f(file i, int n) { cat i n stdout=@o; }
file x <"x">;
file y = f(x, "three");
