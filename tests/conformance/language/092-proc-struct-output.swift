type P { int x; int y; }
(P p) mk(int a) { p.x = a; p.y = a * 2; }
P q = mk(4);
trace(q.x, q.y);
