type file;
string s[] = ["x", "y z"];
file f <"238-writedata-string-array.out">;
f = writeData(s);
