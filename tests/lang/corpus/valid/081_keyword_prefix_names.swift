int fork = 3;
int iffy = 2;
string types = "x";
int intx = fork + iffy;
trace(intx, types);
