trace(length("hello"));
