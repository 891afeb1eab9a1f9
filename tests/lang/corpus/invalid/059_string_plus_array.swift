// expect: Operator '+' cannot be applied to 'string' and 'int[]'
int a[] = [1, 2];
string s = "a" + a;
