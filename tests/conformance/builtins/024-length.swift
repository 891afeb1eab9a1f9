int a[] = [1, 2, 3, 4];
trace(length(a));
string e[];
trace(length(e));
