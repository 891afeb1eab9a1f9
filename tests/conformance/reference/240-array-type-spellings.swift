int[][] m;
int n[][];
int[string] byname;
int byname2[string];
m[0][0] = 1;
n[0][1] = 2;
byname["x"] = 3;
byname2["y"] = 4;
trace(m[0][0] + n[0][1] + byname["x"] + byname2["y"]);
