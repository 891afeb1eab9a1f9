(string r) f () { r = "v"; }
string s;
(s) = f();
trace(s);
