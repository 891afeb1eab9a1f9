float tiny = 1.0 / 10000.0;
float huge = 123456789.0 * 100.0;
trace(tiny, -tiny, huge, 1.0 / 1000.0, 10000000.0 * 1.0, 1234567.0 * 1.0);
trace(strcat(tiny), "h=" + huge);
