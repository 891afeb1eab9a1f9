trace(1, 2.5, "s", true, 3.0);
