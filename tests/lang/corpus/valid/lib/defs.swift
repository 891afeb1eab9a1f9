type file;
(int r) helper(int x) { r = x * 2; }
