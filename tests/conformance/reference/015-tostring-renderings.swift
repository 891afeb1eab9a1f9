type S { int a; }
S s;
s.a = 1;
string t = toString(1.0);
trace(t, toString(3), toString(true), toString(s));
