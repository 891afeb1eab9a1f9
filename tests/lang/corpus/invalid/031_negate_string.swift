// expect: Negation operation can only be applied to parameter of numeric types.
string s = -"a";
