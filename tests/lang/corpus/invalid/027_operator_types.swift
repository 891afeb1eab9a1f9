// expect: Operator '+' cannot be applied to 'boolean' and 'int'
int x = true + 1;
