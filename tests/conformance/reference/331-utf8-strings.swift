string s = "héllo wörld ✓";
trace(s);
tracef("%s\n", s);
