type inner { int a; string b; }
type outer { inner i; inner arr[]; float f; }
outer o;
o.i.a = 1;
o.i.b = "x";
o.arr[0].a = 2;
o.f = 1.5;
trace(o.i.a, o.arr[0].a);
