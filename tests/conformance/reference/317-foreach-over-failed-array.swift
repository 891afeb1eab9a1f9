// THIS-SCRIPT-SHOULD-FAIL
type file;
app (file o) fail () {
  "false" stdout=@o;
}
file f = fail();
string lines[] = readData(f);
foreach l in lines {
  trace(l);
}
trace("independent");
