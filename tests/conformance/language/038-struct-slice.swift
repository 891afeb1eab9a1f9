type P { int x; }
P ps[];
ps[0].x = 5; ps[1].x = 6;
int xs[] = ps.x;
trace(xs);
