int n = readData("129-n.txt");
string s = readData("129-s.txt");
trace(n + 1, s);
