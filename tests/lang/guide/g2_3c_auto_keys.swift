// User Guide 2.3: auto keys from one array index another
int[auto] a; int[auto] b; a << 1; a << 2; foreach v, k in a { b[k] = a[k] * 2; }
