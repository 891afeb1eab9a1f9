// THIS-SCRIPT-SHOULD-FAIL: without a string, + is numeric only
boolean b = true;
trace(b + 1);
