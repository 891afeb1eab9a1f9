int x = 4;
string s;
if (x %% 2 == 0) { s = "even"; } else { s = "odd"; }
trace(s);
