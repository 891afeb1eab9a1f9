// THIS-SCRIPT-SHOULD-FAIL
type file;
app (file o) fail () {
  "false" stdout=@o;
}
(int r) wrapped () {
  int v = readData(fail());
  r = v + 1;
}
int x = wrapped();
trace("x", x);
trace("independent");
