int out[];
foreach i in [0:2] { foreach j in [0:2] { if (i == j) { out[i] = i * 100; } } }
trace(out);
