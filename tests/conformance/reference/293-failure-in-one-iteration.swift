// THIS-SCRIPT-SHOULD-FAIL
type file;
app (file o) maybe (int i) {
  sh "-c" "test $0 -ne 2 && echo ok $0" i stdout=@o;
}
file outs[] <simple_mapper; prefix="293-o", suffix=".txt">;
foreach i in [1:3] {
  outs[i] = maybe(i);
}
