trace(split("a  b c", " "), replaceAll("a.b.c", ".", "/"), matches("abc123", "[a-z]+[0-9]+"));
trace(lastIndexOf("hello", "l", -1), replaceAllRe("a1b22", "([0-9]+)", "<$1>"), join(["x", "y"], "-"));
