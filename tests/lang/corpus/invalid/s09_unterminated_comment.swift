// expect: unterminated comment
int a = 1; /* never closed
