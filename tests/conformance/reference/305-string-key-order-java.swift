int m[string];
m["b"] = 1;
m["B"] = 2;
m["a"] = 3;
m["10"] = 4;
m["9"] = 5;
trace(m);
