(int r) add(int a, int b) { r = a + b; }
trace(add(add(1, 1), add(2, 2)));
int x = add(1, 2) * 3;
