// THIS-SCRIPT-SHOULD-FAIL
trace(foo(1));
