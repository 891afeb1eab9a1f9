int m[string];
m["b"] = 2;
m["a"] = 1;
m["c"] = 3;
trace(m);
