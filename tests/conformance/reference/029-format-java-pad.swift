trace(format("%.2f|%5s", 3.14159, "x"));
trace(pad(5, 42));
