type P { int x; string y; }
P a; P b;
a.x = 1; a.y = "q";
b = a;
trace(b.x, b.y);
