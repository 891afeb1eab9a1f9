// THIS-SCRIPT-SHOULD-FAIL
// A failed assert is not an app failure: even with lazyErrors it ends the run, and
// the console says "Execution failed:" with the assert's message and position
// (reference 2.6), not a list of lazy errors.
int x = 3;
assert(x == 4, "x is not four");
