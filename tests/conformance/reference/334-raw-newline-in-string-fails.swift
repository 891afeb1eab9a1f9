// THIS-SCRIPT-SHOULD-FAIL
string s = "line one
line two";
trace(s);
