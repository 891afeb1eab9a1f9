// THIS-SCRIPT-SHOULD-FAIL: a constant format that read/write do not know is a compile
// error (exit 3) before anything runs, not a failure after the apps before it.
import "stdlib.v2";
type file;
int x = 3;
file f = write(x, format = "JSON");
