string[string][int] m;
m["a"][1] = "a1"; m["b"][0] = "b0";
foreach row, k in m { foreach v, j in row { trace(k, j, v); } }
