// THIS-SCRIPT-SHOULD-FAIL
string s = "a\qb";
trace(s);
