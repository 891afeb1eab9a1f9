trace(format("%.2f|%5s", 3.14159, "x"));
trace(format("%05d %-3s| %x", 42, "a", 255));
