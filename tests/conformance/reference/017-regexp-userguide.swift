string v = @regexp("abcdefghi", "c(def)g", "monkey");
trace(v);
trace(regexp("abc123def", "[0-9]+", "<$0>"));
trace(regexp("one two", "(\\w+) (\\w+)", "$2 $1"));
