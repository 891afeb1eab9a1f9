// THIS-SCRIPT-SHOULD-FAIL
type file;
file f <no_such_mapper; file="x">;
trace(@f);
