float x = 2.0;
switch (x) {
  case 1:
    trace("one");
  case 2:
    trace("two");
  default:
    trace("other");
}
