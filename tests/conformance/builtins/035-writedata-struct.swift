type file;
type T { string l; string c; string r; }
T t;
t.l = "baz";
t.c = "BAZ";
t.r = "Baz";
file f <"035-writedata-struct.out"> = writeData(t);
