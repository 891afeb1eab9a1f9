// THIS-SCRIPT-SHOULD-FAIL
trace(-"a");
