// expect: No member c in type T
type T { int a; }
T t;
t.c = 1;
