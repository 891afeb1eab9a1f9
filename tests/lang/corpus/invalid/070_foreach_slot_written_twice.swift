// expect: 5:34: Variable f is written to in two different locations
type file;
app (file t) echo (string s) { echo s stdout=@filename(t); }
file fs[] <fixed_array_mapper; files="c1.txt, c2.txt">;
foreach f in fs { f = echo("x"); f = echo("y"); }
