(int r) fact(int n) { if (n <= 1) { r = 1; } else { r = n * fact(n - 1); } }
trace(fact(10));
