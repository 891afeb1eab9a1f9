// THIS-SCRIPT-SHOULD-FAIL
string s = sprintf("%04i", 7);
trace(s);
