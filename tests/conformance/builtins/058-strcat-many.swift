string s = strcat("a", "b", "c", 1, 2, 3);
tracef("%s\n", s);
