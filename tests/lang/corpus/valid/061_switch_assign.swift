int x = 2;
string s;
switch (x) {
    case 1: s = "one";
    case 2: s = "two";
    default: s = "many";
}
trace(s);
