(int r) inc(int x) { r = x + 1; }
iterate i { trace(i); int k = i; } until (inc(k) == 3);
