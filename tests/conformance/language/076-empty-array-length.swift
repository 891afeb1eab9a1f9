int a[];
trace(length(a));
