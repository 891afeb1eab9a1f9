// expect: Wrong type for parameter 0 of strsplit; expected string, got int
string parts[] = strsplit(1, ",");
