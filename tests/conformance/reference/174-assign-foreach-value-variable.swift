type file {}
app (file t) echo (string s) {
  echo s stdout=@filename(t);
}
string outputNames[] = ["174-one.txt", "174-two.txt"];
file outputFiles[] <array_mapper; files=outputNames>;
foreach f in outputFiles {
  f = echo("hello");
}
