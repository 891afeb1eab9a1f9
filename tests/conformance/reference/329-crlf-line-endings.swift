type file;
int x = 2;
// comment
trace(x * 21);
string s = "a";
trace(s);