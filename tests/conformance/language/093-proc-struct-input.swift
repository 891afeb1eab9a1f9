type P { int x; int y; }
(int s) sum(P p) { s = p.x + p.y; }
P q; q.x = 1; q.y = 2;
trace(sum(q));
