(int r) double(int x) { r = x * 2; }
int y = double(21);
trace(y);
