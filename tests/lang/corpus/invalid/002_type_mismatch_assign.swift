// expect: You cannot assign value of type string to a variable of type int
int a;
a = "x";
