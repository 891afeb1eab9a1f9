// User Guide 2.10.1: atomic procedure
type binaryfile;
app (binaryfile bf) myproc (int i, string s="foo") { myapp i s @filename(bf); }
