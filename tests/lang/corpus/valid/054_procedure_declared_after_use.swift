trace(twice(4));
(int r) twice(int x) { r = x * 2; }
