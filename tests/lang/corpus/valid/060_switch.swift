int x = 2;
switch (x) {
    case 1:
        trace("one");
    case 2:
        trace("two");
        trace("still two");
    case 3:
    default:
        trace("other");
}
