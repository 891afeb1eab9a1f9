// expect: cannot pass type 'file' as a parameter to application 'cat'
type file;
app (file o) f(file i) { cat i stdout=@o; }
