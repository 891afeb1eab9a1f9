float f = toFloat("2.50");
string s = toString(f);
trace(s, toString(1.0 / 4.0), toString(10));
