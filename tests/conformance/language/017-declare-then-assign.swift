string s;
trace(s);
s = "later";
