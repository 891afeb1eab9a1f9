trace(regexp("abc123def", "[0-9]+", "<$0>"));
string v = regexp("abcdefghi", "c(def)g", "monkey");
trace(v);
trace(regexp("a1b2", "([a-z])([0-9])", "$2$1"));
