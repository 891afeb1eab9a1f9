type file;
type image file;
type count int;
count n = 3;
trace(n + 1);
