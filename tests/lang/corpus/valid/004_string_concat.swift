string s = "a" + 1 + 2.5 + "b";
string t = strcat(s, "x", 3);
trace(s, t);
