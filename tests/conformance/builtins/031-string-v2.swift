trace(substring("hello", 1, 3), indexOf("hello", "l", 0), toUpper("abc"), toLower("ABC"), trim("  x  "));
