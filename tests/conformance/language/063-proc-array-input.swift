(int t) total(int a[]) { t = a[0] + a[1] + a[2]; }
int v[] = [1, 2, 3];
trace(total(v));
