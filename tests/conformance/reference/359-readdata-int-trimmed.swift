int n = readData("359-n.txt");
trace(n * 2);
