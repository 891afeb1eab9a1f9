// THIS-SCRIPT-SHOULD-FAIL
float f = toFloat("not a number");
trace(f);
