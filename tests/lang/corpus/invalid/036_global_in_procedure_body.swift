// expect: Global g can only be declared in the root scope of a program
(int r) f() { global int g = 1; r = g; }
