float third = 1.0 / 3.0;
trace(3.0, third, 12345.5, -2.5);
trace(7 / 2, 1.0 * 4);
