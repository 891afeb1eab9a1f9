int a = 1 + 2 * 3 - 4;
int b = a %/ 2;
int c = a %% 3;
float d = a / 2;
trace(a, b, c, d);
