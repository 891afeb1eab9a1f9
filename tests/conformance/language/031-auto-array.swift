int[auto] a;
foreach i in [1:5] { a << (i * 2); }
trace(length(a));
foreach v in a { trace(v); }
