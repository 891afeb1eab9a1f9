type T { int v[]; string n; }
T t;
t.n = "n";
foreach i in [0:2] { t.v[i] = i + 1; }
trace(t.v, length(t.v));
