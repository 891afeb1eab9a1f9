// THIS-SCRIPT-SHOULD-FAIL: assertEqual of two different strings ends the run (exit 2).
import "stdlib.v2";

assertEqual("left", "right", "strings differ");
trace("not reached");
