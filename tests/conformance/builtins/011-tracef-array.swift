int a[] = [9, 91, 19];
tracef("%q\n", a);
tracef("%q %b %%\n", [100, 101], true);
