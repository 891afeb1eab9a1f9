int x = 5;
string s = sprintf("done%k", x);
trace(s);
