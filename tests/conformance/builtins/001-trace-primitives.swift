trace(1, 2.5, "s", true, false, 3.0);
