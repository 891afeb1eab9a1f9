// THIS-SCRIPT-SHOULD-FAIL
file f <"283-x.txt">;
trace(@f);
