trace(x + y);
int x = 3;
S s;
s.a = 4;
int y = s.a;
type S { int a; }
