type file;
type row { int a; string b; }
file data <"data.txt">;
row rows[] = readData(data);
int nums[] = readdata("nums.txt");
row s = readStructured("s.txt");
file out <"out.txt"> = writeData(rows);
tracef("%i %s\n", 1, "x");
printf("%s\n", "y");
fprintf("log.txt", "%i\n", 3);
int n = extractInt(data);
trace(length(rows), n, exists("data.txt"));
