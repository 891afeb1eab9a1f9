type file;
type pair { file a; int n; }
pair ps[];
int ns[] = ps.n;
int ms[] = ps[*].n;
string all = filename(ps[*].a);
trace(ns[0], ms[0], all);
