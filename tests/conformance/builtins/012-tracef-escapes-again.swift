// a backslash-n left after Swift escaping is a newline for tracef
tracef("a\\tb\\n");
