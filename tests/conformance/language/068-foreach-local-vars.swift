foreach i in [1:3] { int sq = i * i; string s = "v" + sq; trace(s); }
