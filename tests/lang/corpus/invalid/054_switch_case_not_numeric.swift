// expect: Case value has to be of numeric type, not string
int x = 1;
switch (x) { case "a": trace(1); }
