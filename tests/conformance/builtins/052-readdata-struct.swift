type P { int x; float y; string n; }
P p = readData("p.txt");
trace(p.x, p.y, p.n);
