tracef("%f\n", 22.0 / 7.0);
