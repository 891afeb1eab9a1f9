int x;
int c = 2;
if (c > 1) {
  x = 1;
} else {
  x = 2;
}
string s;
switch (c) {
  case 1:
    s = "one";
  default:
    s = "many";
}
trace(x, s);
