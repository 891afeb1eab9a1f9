(int r) half (int x) {
  r = x %/ 2;
}
int v[];
v[0] = 100;
iterate k {
  v[k+1] = half(v[k]);
} until (v[k] <= 1);
trace(length(v), v[length(v) - 1]);
