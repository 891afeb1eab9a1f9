type file;
string s = "foo";
file f <"065-writedata-primitive.out">;
f = writeData(s);
