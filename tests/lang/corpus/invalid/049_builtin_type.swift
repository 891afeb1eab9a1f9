// expect: Parameter type mismatch in call to strsplit: expected string, got int
string parts[] = strsplit(1, ",");
