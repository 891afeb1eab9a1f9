// THIS-SCRIPT-SHOULD-FAIL
trace([1, "a"]);
