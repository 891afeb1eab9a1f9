type In { int a; }
type Out { In i; string s; }
Out o;
o.i.a = 7; o.s = "z";
trace(o.i.a, o.s);
