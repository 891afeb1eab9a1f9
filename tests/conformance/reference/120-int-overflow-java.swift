int big = 2147483647;
trace(big + 1);
trace(big * 2);
