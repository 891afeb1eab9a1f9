int x = 2;
if (x == 1) { trace("one"); } else if (x == 2) { trace("two"); } else { trace("other"); }
