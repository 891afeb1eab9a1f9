// expect: re-definition of field 'a' in type 'T'
type T { int a; string a; }
