string s = @sprintf("\t%s\n", "hello");
tracef("[%s]", s);
tracef("\n");
