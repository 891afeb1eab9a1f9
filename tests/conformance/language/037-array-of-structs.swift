type P { int x; int y; }
P ps[];
foreach i in [0:2] { ps[i].x = i; ps[i].y = i * i; }
foreach p, i in ps { trace(i, p.x + p.y); }
