type P { int x; }
(P ps[]) mk(int n) { foreach i in [0:n] { ps[i].x = i * 3; } }
P all[] = mk(2);
trace(length(all), all[2].x);
