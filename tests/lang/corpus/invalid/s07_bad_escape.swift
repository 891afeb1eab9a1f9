// expect: invalid escape sequence '\d' in string
string s = "a\d";
