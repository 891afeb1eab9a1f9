tracef("%s=%i\n", "x", 5);
