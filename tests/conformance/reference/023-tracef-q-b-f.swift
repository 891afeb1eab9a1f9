int a[] = [9, 91, 19];
tracef("%q\n", a);
tracef("%b %f %f\n", true, 22.0/7.0, 2.5);
tracef("100%%\n");
tracef("%d items\n", 3);
