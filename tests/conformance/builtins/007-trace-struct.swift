type S { int a; string b; }
S s;
s.a = 1;
s.b = "x";
trace(s);
trace(s.a, s.b);
