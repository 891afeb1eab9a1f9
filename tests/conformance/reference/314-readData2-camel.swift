type P { int x; string s; }
P p = readData2("314-p.txt");
trace(p.x, p.s);
