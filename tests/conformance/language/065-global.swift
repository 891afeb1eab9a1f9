global int g = 40;
(int r) addg(int x) { r = x + g; }
trace(addg(2));
