assert(1 + 1 == 2, "math");
assert(1);
trace("ok");
