// expect: Condition in switch statements has to be of numeric type.
string s = "a";
switch (s) { case 1: trace(1); }
