// expect: 2:10: expected ';' after statement
int a = 1
int b = 2;
