// expect: Wrong number of function input arguments: specified 3 and should be 2
string parts[] = strsplit("a", ",", 3);
