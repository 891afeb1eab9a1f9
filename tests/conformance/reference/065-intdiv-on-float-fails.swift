// THIS-SCRIPT-SHOULD-FAIL
float x = 7.0 %/ 2.0;
trace(x);
