// writeData of an empty array of structs writes 0.96's header line (field names in
// Java hash order, each followed by a space); an empty int array writes nothing.
type file;
type S { int l; int c; int r; }
S[] none;
file f <"011-writedata-empty-struct-array.out"> = writeData(none);
int[] empty;
file g <"ints.out"> = writeData(empty);
