// expect: 3:37: unexpected ';'
int x = 1;
switch (x) { case 1: trace(1); break; }
