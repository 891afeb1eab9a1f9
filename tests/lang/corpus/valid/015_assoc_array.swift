float[string] a;
a["one"] = 0.2;
a["two"] = 0.4;
trace(a["one"]);
