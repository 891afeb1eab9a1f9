// expect: expected an index expression between '[' and ']'
int a[];
int b = a[];
