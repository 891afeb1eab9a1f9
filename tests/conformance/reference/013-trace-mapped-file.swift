type file;
app (file o) greet (string s) {
  echo s stdout=@filename(o);
}
file g <"013-g.txt">;
g = greet("hello");
trace(g);
