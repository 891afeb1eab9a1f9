// Trunk's library v2 assertions that hold: nothing is printed but the final trace.
import "stdlib.v2";

assertEqual("abc", "abc");
assertEqual(3, 3);
assertEqual(2.5, 2.5);
assertEqual(2, 2.0);
assertEqual(true, 1 < 2, "booleans");
assertAlmostEqual(0.1 + 0.2, 0.3, 1e-12);
assertLT(1, 2);
assertLT(1.5, 2);
assertLTE(2, 2);
assertGT(3.0, 2.5, "greater");
assertGTE(3, 3);
assert(length("four") == 4, "string length");
trace("all held");
