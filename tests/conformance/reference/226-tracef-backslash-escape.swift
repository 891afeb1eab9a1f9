tracef("a\\\\b\n");
