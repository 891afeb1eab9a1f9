int a = -5;
int b = +a;
float c = -(1.5 * 2);
boolean d = !(a < b);
trace(a, b, c, d);
