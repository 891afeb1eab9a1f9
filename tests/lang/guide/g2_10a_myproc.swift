// User Guide 2.10: optional parameters
type binaryfile;
app (binaryfile bf) myproc1 (int i, string s="foo") { myapp i s @filename(bf); }
binaryfile mybf = myproc1(1);
binaryfile mybf2 = myproc1 (1, s="bar");
