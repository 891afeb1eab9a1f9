// expect: Supplied array index type (string) does not match the declared index type (int)
int a[];
a["x"] = 1;
