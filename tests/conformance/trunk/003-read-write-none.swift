// read/write with the default format None: one primitive per file, read back typed.
import "stdlib.v2";
type file;

file fi <"i.txt">;
file ff <"f.txt">;
file fs <"s.txt">;
file fb <"b.txt">;
fi = write(41 + 1);
ff = write(2.0);
fs = write("A string");
fb = write(true, format = "None");
int i = read(fi);
float f = read(ff);
string s = read(fs, "None");
boolean b = read(fb);
assertEqual(i, 42);
assertEqual(f, 2.0);
assertEqual(s, "A string");
assertEqual(b, true);
trace(i, f, s, b);
