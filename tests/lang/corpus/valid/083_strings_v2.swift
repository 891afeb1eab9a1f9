string s = "  Hello World  ";
trace(trim(s), toUpper(s), toLower(s), substring(s, 2, 5), indexOf(s, "o", 0),
      split("a b  c", " "), join(["a", "b"], "-"), replaceAll(s, "l", "L"),
      matches("abc", "a.c"), findAllRe("a1b22", "[0-9]+"));
