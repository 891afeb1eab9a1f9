// expect: 3:22: variable total is not writeable in this scope
int total;
foreach i in [0:9] { total = i; }
