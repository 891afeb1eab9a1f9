// THIS-SCRIPT-SHOULD-FAIL
type file;
app (file o) missing () {
  no_such_program_hunter stdout=@o;
}
file o <"245-o.txt">;
o = missing();
