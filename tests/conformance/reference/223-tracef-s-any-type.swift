tracef("%s|%s|%s|%s\n", 3, 2.5, 1.0, true);
