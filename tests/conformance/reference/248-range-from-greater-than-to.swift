int e[] = [5:1];
trace(length(e));
