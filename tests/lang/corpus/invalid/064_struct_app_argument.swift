// expect: Cannot pass type 'pair' as a parameter to application 'cat'
type file;
type pair { int a; int b; }
app (file o) f(pair p) { cat p stdout=@o; }
