switch (9) { case 1: trace("one"); }
trace("after");
