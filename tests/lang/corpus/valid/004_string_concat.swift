string s = "a" + 1 + 2.5 + true;
string t = strcat(s, "x", 3);
trace(s, t);
