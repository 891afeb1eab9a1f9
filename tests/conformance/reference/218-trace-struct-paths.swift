type Inner { int v; }
type Outer { Inner inner; string name; }
Outer o;
o.inner.v = 1;
o.name = "n";
Outer arr[];
arr[0].inner.v = 2;
arr[0].name = "m";
trace(o.inner);
trace(arr[0]);
trace(arr[0].inner);
