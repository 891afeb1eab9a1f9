foreach i in [0:9] { trace(i); }
foreach j in [1:10:3] { trace(j); }
foreach f in [0.0:1.0:0.25] { trace(f); }
foreach v, k in [5:7] { trace(v, k); }
