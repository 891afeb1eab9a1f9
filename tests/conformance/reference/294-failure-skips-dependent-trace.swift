// THIS-SCRIPT-SHOULD-FAIL
type file;
app (file o) fail () {
  "false" stdout=@o;
}
file f = fail();
string s = readData(f);
trace("independent");
