string test[] = ["this", "is", "a", "test" ];
string mystring = @strjoin(test, " ");
tracef("%s\n", mystring);
