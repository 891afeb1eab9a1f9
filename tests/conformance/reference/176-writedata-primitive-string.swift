type file;
string s = "foo";
file f <"176-writedata-primitive-string.out">;
f = writeData(s);
