float big = 100000.0 * 100000.0;
trace(big);
trace(strcat("v=", big), "w=" + 0.5);
