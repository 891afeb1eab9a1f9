// THIS-SCRIPT-SHOULD-FAIL
type file;
app (file o) fail () {
  "false" stdout=@o;
}
iterate i {
  trace("body", i);
} until (readData(fail()) == 1);
