// expect: heterogeneous arrays are not supported
string a[] = ["a", 1];
