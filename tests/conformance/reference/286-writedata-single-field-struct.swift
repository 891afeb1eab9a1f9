type file;
type S { int a; }
S s;
s.a = 7;
file f <"286-writedata-single-field-struct.out">;
f = writeData(s);
