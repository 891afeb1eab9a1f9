// expect: Illegal redefinition of procedure attempted for f
(int r) f() { r = 1; }
(int r) f() { r = 2; }
