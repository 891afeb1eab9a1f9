foreach x, i in [0.0:1.0:0.25] { trace(i, x); }
