// THIS-SCRIPT-SHOULD-FAIL
trace(toInt("3.0"));
