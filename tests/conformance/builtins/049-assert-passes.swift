assert(1 + 1 == 2, "math");
assert(true);
trace("ok");
