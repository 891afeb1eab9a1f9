int[int] a;
string[float] b;
boolean[boolean] c;
int d[string];
int e[int][string];
a[1] = 1; b[1.5] = "x"; c[true] = false; d["k"] = 4; e[1]["x"] = 2;
trace(a[1], b[1.5], c[true], d["k"], e[1]["x"]);
