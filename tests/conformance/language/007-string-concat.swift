trace("a" + 1, 2 + "b", "x" + 1.5, "y" + 1.0, "t" + true);
