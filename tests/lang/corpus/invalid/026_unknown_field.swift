// expect: Type T has no field named 'c'
type T { int a; }
T t;
t.c = 1;
