// expect: Invalid array key type: T
type T { int a; }
int a[T];
