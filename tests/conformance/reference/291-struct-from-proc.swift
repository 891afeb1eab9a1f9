type S { int a; string b; }
(S s) mk (int v) {
  s.a = v;
  s.b = "b" + v;
}
S s = mk(4);
trace(s.a, s.b);
