string s[] = ["x", "y"];
foreach v, k in s { trace(k, v); }
