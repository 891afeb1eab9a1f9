float f = 3;
trace(f, 2 * 1.5, 1 == 1.0, 2 < 2.5, +3, -(-4), !false);
