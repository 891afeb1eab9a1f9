int i = readData("i.txt");
string s = readData("s.txt");
trace(i + 1, s);
