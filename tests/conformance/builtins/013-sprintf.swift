string s = sprintf("\t%s|%i|%b|%f", "hello", 4, true, 2.5);
trace(s);
