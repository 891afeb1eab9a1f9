float v[] = readData("237-v.txt");
trace(v[0] + v[1], v);
