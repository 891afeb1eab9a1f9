// THIS-SCRIPT-SHOULD-FAIL
type file;
file f[] <simple_mapper; prefix="x", noauto="true">;
trace(filename(f));
