(int q, int r) f (int C) { q = C; r = C * 2; }
int i, j;
(i = q, j = r) = f(7);
trace(i, j);
