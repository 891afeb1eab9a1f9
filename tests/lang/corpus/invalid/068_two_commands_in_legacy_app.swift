// expect: 6:5: an app procedure runs exactly one command; found a second one ('/bin/echo')
type file;
(file o) greet (string s) {
  app {
    echo s stdout=@filename(o);
    "/bin/echo" s;
  }
}
file out <"o.txt">;
out = greet("hi");
