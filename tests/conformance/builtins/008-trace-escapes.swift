trace("a\tb\"c");
