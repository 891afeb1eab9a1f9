int values[] = readData("037-values.txt");
trace(values);
int total = values[0] + values[1] + values[2];
trace(total);
