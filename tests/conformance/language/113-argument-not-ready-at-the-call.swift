// a struct or array argument that does not exist yet when the procedure is called
// (an element written later): the procedure's reads of its members and elements wait
// for it, as reads of a plain argument do
type file;
type T { int v; int w; }
app (file o) three () { echo "3" stdout=@o; }
(int s) first(T t) { s = t.v; }
(int s) head(int[] xs) { s = xs[0]; }
(string s) name(file g) { s = filename(g); }
file fl <"n.txt">;
fl = three();
T a;
a.v = readData(fl);
a.w = 2;
T arr[];
arr[0] = a;
trace(first(arr[0]));
int ys[][];
int k = readData(fl);
ys[0][0] = k + 1;
trace(head(ys[0]));
file fs[];
fs[0] = fl;
trace(name(fs[0]));
