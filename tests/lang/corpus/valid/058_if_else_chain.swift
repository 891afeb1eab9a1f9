int x = 5;
if (x < 3) {
    trace("small");
} else if (x < 10) {
    trace("medium");
} else {
    trace("large");
}
