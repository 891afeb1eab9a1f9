type file {}
file f <"/etc/passwd">;
string s = @dirname(f);
tracef("dirname: %s\n", s);
