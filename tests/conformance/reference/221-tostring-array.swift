int a[] = [1, 2];
string s = toString(a);
trace(s);
