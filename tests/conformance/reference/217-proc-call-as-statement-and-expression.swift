(int r) mynum (int p) {
  r = p;
}
int x = mynum(3);
trace(x, mynum(x) + 1);
