// expect: 'type' is a reserved word
int type = 3;
