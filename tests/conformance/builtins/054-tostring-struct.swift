type S { int a; }
S s;
s.a = 3;
trace(toString(s));
