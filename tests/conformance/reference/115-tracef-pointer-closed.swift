tracef("pointer:%p\n", 3);
tracef("spacing: WORD\tWORD\nWORD\tWORD\n");
