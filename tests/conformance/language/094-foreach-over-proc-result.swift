(int r[]) gen() { r[0] = 5; r[1] = 6; }
foreach v in gen() { trace(v); }
