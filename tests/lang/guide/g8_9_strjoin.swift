// User Guide 8.9
string test[] = ["this", "is", "a", "test" ]; string mystring = @strjoin(test, " "); tracef("%s\n", mystring);
