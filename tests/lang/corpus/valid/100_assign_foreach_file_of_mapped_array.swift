// Swift's IO/q7: the value variable of a foreach over a mapped file array is the
// element's slot; assigning it writes the mapped file.
type file {}
app (file t) echo (string s) {
  echo s stdout=@filename(t);
}
string outputNames[] = ["one", "two", "three"];
file outputFiles[] <array_mapper; files=outputNames>;
foreach f in outputFiles {
  f = echo("hello");
}
file grid[][] <simple_mapper; prefix="g", suffix=".txt">;
foreach row in grid {
  foreach g, j in row {
    if (j == 0) { g = echo("first"); } else { g = echo("other"); }
  }
}
(file outs[]) fill () {
  foreach o, i in outs { o = echo(toString(i)); }
}
file filled[] <fixed_array_mapper; files="a.txt, b.txt">;
filled = fill();
