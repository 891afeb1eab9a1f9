// User Guide 9.3-9.5
type file;
int i = 3; tracef("%s: %i\n", "the value is", i);
trace("x", i);
file out <"out.txt"> = writeData(i);
