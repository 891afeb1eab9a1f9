string s = strcat(1.0, 2.5, 1000.0, true);
trace(s);
trace(3 + "a", "a" + 3.5, "x=" + 2.0);
float y = 1.0 * toFloat(1);
int x = 1;
trace(strcat("x = ", x, ", y = ", y));
