type name string;
type outer { inner i; name label; }
type inner { int v; }
name n = "x";
outer o;
o.i.v = 5;
o.label = n;
trace(o.label, o.i.v);
