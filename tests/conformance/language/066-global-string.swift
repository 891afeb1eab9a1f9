global string prefix = "p-";
(string r) tag(string s) { r = prefix + s; }
trace(tag("a"), tag("b"));
