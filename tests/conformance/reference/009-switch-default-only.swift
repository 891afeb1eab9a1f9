int x = 7;
switch (x) {
  case 1:
    trace("one");
  default:
    trace("something else");
}
switch (x) {
  case 1:
    trace("never");
}
