float f = 2.0;
switch (f) { case 1.0: trace("a"); case 2.0: trace("b"); }
