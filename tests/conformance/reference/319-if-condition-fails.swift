// THIS-SCRIPT-SHOULD-FAIL
type file;
app (file o) fail () {
  "false" stdout=@o;
}
int v = readData(fail());
if (v > 0) {
  trace("positive");
} else {
  trace("not positive");
}
trace("independent");
