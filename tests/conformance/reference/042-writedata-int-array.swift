type file;
int a[] = [3, 1, 2];
file f <"042-writedata-int-array.out">;
f = writeData(a);
