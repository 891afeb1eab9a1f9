trace(strcat(1.0, 2.5, 1000.0, true));
trace(strcat("a", 1, "b"));
