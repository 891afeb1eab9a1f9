int[string] a;
a["b"] = 2; a["a"] = 1;
foreach v, k in a { trace(k, v); }
