type file;
type S { string v; }
S xs[];
xs[0].v = "p";
xs[1].v = "q";
file f <"287-writedata-struct-array-single-field.out">;
f = writeData(xs);
