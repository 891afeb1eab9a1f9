// expect: Wrong array element type. (item of type int in an array of string)
string a[] = ["a", 1];
