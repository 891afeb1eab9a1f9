float a[] = [0.0:3.0:0.25];
trace(a);
