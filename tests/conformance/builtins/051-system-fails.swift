// THIS-SCRIPT-SHOULD-FAIL
string r[] = system("exit 3");
trace(r);
