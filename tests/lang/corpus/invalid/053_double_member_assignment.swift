// expect: Variable t is written to in two different locations
type T { int a; }
T t;
t.a = 1;
t.a = 2;
