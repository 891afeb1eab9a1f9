// expect: range bounds must be numeric, not string
foreach i in ["a":"b"] { trace(i); }
