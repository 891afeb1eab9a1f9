int x = 5;
int y;
if (x > 3) { y = 1; } else { y = 2; }
trace(y);
