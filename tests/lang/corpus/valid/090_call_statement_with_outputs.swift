(int r) f(int x) { r = x; trace(x); }
f(3);
