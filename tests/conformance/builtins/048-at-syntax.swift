string s = @strcat("a", "b");
trace(s, @toString(2));
