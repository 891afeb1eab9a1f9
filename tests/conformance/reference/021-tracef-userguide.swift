int i = 3;
tracef("%s: %i\n", "the value is", i);
