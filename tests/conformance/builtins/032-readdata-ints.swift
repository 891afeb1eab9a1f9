type file;
file f <"nums.txt"> = writeData([3, 1, 2]);
int a[] = readData(f);
trace(a);
