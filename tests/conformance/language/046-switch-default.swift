switch (9) { case 1: trace("one"); default: trace("default"); }
