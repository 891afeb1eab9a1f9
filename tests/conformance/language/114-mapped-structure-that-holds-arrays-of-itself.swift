// a mapped variable whose type holds an array of its own type: the mapper names each
// member's file however deep the value goes
type file;
type T { file f; T[] next; }
app (file o) mk (int n) { echo n stdout=@o; }
(T r) build(int n) {
  r.f = mk(n);
  if (n > 0) { r.next[0] = build(n - 1); }
}
T a <simple_mapper; prefix="t", suffix=".txt">;
a = build(2);
trace(filenames(a));
trace(readData(a.next[0].next[0].f));
