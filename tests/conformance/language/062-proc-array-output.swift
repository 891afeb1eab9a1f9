(int r[]) squares(int n) { foreach i in [0:n] { r[i] = i * i; } }
int s[] = squares(3);
trace(s, length(s));
