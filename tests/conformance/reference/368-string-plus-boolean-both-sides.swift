// + with a string on either side concatenates booleans too (0.96 checkTypesInArithmExpr);
// integral floats lose ".0" as in strcat.
boolean b = 2 > 1;
trace(false + "x", "y" + b, "n=" + 1 + true, 1.0 + "f" + false);
