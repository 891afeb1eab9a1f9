type file;
type rec { int columns[]; string name, kind; file f; }
rec r;
r.columns[0] = 1;
r.columns[1] = 2;
r.name = "x";
r.kind = "y";
trace(r.columns[1], r.name);
