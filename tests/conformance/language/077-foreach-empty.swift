int a[];
foreach v in a { trace(v); }
trace("done");
