type P { int a; string b; }
int n = readStructured("285-n.txt");
P ps[] = readStructured("285-ps.txt");
trace(n, ps[1].a, ps[0].b);
