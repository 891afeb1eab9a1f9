// a recursion builds a list 100 structures deep, writing each one's member array
// from the next call's output; the procedure calls nest deeper than the engine runs on
// one Python stack, so later levels start from its trampoline
type T { int v; T[] next; }
(T r) build(int n) {
  r.v = n;
  if (n > 0) { r.next[0] = build(n - 1); }
}
(int s) total(T t) {
  if (t.v == 0) { s = 0; } else { s = t.v + total(t.next[0]); }
}
T list = build(100);
trace(total(list));
