string lines[] = readData("360-l.txt");
trace(length(lines), lines[1]);
