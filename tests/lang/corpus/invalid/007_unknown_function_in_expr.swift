// expect: No function or procedure 'bar' found.
int x = bar(2);
