type file;
type P { int x; }
int a[] = readdata("313-a.txt");
P p = readdata2("313-p.txt");
P q = readstructured("313-p.txt");
int n = extractint(@filename(f));
file f <"313-a.txt">;
file w <"313-deprecated-lowercase-io.out">;
w = writedata(a);
trace(a[1], p.x, q.x, n);
