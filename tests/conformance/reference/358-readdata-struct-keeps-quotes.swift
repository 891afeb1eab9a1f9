type R { string name; int n; }
R r = readData("358-r.txt");
trace(r.name, r.n);
