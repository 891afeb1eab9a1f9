// warns: cannot pass type 'pair' as a parameter to application 'cat'
type file;
type pair { int a; int b; }
app (file o) f(file i, pair p) { cat i @i p stdout=@o; }
file x <"x">;
pair q; q.a = 1; q.b = 2;
file y = f(x, q);
