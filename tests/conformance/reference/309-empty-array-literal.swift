int e[] = [];
trace(e, length(e));
