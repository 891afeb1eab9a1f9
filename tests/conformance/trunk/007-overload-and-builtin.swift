// A user overload of a builtin's name: assertEqual(pair[], pair[]) is the script's,
// assertEqual(int, int) inside it is still trunk's builtin; an app overload too.
import "stdlib.v2";
type file;
type pair { int k; string v; }

assertEqual(pair[] a, pair[] b) {
  assertEqual(length(a), length(b));
  foreach p, i in a {
    assertEqual(p.k, b[i].k);
    assertEqual(p.v, b[i].v);
  }
  trace("arrays equal");
}

app (file o) show(string s) { echo s stdout=@o; }
app (file o) show(int n) { echo "number" n stdout=@o; }

pair[] x;
x[0].k = 1; x[0].v = "one";
pair[] y;
y[0].k = 1; y[0].v = "one";
assertEqual(x, y);
file a <"a.txt">;
file b <"b.txt">;
a = show("text");
b = show(5);
trace(read(a), read(b));
