// expect: Conditional operator can only be applied to parameters of same type
boolean b = "a" == 1;
