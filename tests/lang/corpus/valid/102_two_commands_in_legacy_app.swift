// several commands in one app body run in order (Swift/K trunk)
type file;
(file o) greet (string s) {
  app {
    echo s stdout=@filename(o);
    "/bin/echo" s;
  }
}
file out <"o.txt">;
out = greet("hi");
