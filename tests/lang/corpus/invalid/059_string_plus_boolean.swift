// expect: Operator '+' cannot be applied to 'string' and 'boolean'
string s = "a" + true;
