// expect: Cannot pass type 'file' as a parameter to application 'cat' (use @i for its file name)
// expect: Wrong type for parameter number 1, expected int, got string (in call to f)
type file;
app (file o) f(file i, int n) { cat i n stdout=@o; }
file x <"x">;
file y = f(x, "three");
