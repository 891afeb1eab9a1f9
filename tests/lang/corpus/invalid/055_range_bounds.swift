// expect: Range can only be specified with numeric types
foreach i in ["a":"b"] { trace(i); }
