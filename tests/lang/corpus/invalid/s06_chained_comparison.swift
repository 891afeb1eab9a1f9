// expect: comparisons cannot be chained
boolean b = 1 < 2 < 3;
