// a procedure's output that is part of another value (a struct member, an array
// element) stays open while the procedure writes it, after the statement that called it
// has handed it over: here the procedure waits for an app's output first
type file;
type U { int[] xs; }
type T { U u; int w; }
app (file o) three () { echo "3" stdout=@o; }
(U r) fill(int n) { foreach i in [0:n-1] { r.xs[i] = i; } }
(int[] r) tens(int n) { foreach i in [0:n-1] { r[i] = i * 10; } }
file f <"n.txt">;
f = three();
int n = readData(f);
T a;
a.w = 1;
a.u = fill(n);
U b[];
b[0] = fill(n);
int c[][];
c[0] = tens(n);
trace(a.u.xs, a.w);
trace(b[0].xs);
trace(c);
