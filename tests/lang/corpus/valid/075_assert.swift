assert(1 == 1);
assert(true, "must be true");
assert(1);
