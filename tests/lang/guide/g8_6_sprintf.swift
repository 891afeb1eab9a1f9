// User Guide 8.6
string s = @sprintf("\t%s\n", "hello");
