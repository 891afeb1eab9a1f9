// expect: Type int is not a structure
int x = 1;
trace(x.f);
