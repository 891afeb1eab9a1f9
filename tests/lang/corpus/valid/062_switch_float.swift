float f = 1.5;
switch (f) { case 1.5: trace("x"); }
