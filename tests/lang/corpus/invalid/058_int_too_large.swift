// expect: integer literal 3000000000 is too large (int is 32-bit)
int x = 3000000000;
