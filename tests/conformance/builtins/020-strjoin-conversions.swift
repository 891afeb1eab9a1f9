float f[] = [1.1, 2.2];
trace(strjoin(f, ":"));
trace(strjoin([1, 2], ":"));
trace(strjoin([1.0], ":"));
trace(strjoin([true, false], ":"));
