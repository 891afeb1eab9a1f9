boolean flag = true;
string s = "flag: " + flag;
trace(s);
