trace("hello", 1, 2.5, true);
