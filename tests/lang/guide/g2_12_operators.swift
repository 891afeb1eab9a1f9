// User Guide 2.12: every operator
int a = 7; int b = 2;
string s = "x" + "y";
int sum = a + b; int diff = a - b; int prod = a * b; float q = a / b;
int iq = a %/ b; int r = a %% b;
boolean c = a == b || a != b && a < b || a > b || a <= b || a >= b && !true;
