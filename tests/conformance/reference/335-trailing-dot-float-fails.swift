// THIS-SCRIPT-SHOULD-FAIL
float f = 1.;
trace(f);
