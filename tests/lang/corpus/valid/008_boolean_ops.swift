boolean t = true && !false || (1 < 2) && (3 >= 3) && (2 != 1) && ("a" == "a");
if (t) { trace("yes"); } else { trace("no"); }
