// THIS-SCRIPT-SHOULD-FAIL
blob b;
trace("x");
