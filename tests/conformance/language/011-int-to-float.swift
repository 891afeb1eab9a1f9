float f = 3; float g = 1 + 0.5;
trace(f, g, 2 * 1.5);
