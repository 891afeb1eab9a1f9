type T { int v[]; }
T t;
t.v[0] = 3; t.v[1] = 4;
foreach x, k in t.v { trace(k, x * x); }
