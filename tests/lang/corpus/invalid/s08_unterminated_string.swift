// expect: unterminated string
string s = "abc;
