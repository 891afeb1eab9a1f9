int big = 2147483647;
trace(big + 1, big * 2);
