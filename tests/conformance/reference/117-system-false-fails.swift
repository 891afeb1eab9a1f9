// THIS-SCRIPT-SHOULD-FAIL
string results[] = system("false");
foreach r in results {
   tracef("%s\n", r);
}
