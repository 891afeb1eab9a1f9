// THIS-SCRIPT-SHOULD-FAIL
import "nosuchmodule";
trace(1);
