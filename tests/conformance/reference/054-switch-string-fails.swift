// THIS-SCRIPT-SHOULD-FAIL
string s = "a";
switch (s) {
  case "a":
    trace("a");
}
