// expect: 'in' is a reserved word and cannot be used as a name
in a;
