// expect: Conditional operator < can only be applied to parameters of type int, float and string.
boolean b = true < false;
