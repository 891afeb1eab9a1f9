// expect: Array index of type string used on an array with keys of type int
int a[];
a["x"] = 1;
