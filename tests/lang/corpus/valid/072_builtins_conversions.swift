int a = toInt("010") + toInt("99");
float b = toFloat("1.5") + toFloat(2);
string c = toString(1.0);
int d = toint("3");
float e = tofloat("2.5");
string f = tostring(7);
trace(a, b, c, d, e, f);
