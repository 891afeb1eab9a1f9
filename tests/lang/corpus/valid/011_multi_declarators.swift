type file;
file x, y, s, t;
int i = 1, j = 2, k;
k = i + j;
trace(k);
