int n = toint("010") + toint("99");
trace(n);
float f = tofloat("2.5") * 2;
trace(f);
trace(tostring(7) + "!");
