// THIS-SCRIPT-SHOULD-FAIL
type mystruct { int a; int b; }
int array[int][mystruct];
mystruct xx;
xx.a = 1;
xx.b = 2;
array[1][xx] = 55;
