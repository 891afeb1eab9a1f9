int a[] = [];
string s[] = [];
trace(length(a));
