boolean b = readData("288-b.txt");
float f = readData("288-f.txt");
trace(b, f);
