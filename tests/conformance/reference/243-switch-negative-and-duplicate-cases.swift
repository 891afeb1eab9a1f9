int x = -1;
switch (x) {
  case -1:
    trace("minus one");
  case -1:
    trace("duplicate");
  default:
    trace("default");
}
