(string r) f(string a, string b) { r = a + b; }
trace(f(b = "2", a = "1"));
