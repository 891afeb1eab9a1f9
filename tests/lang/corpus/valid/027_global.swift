global int g = 10;
global string prefix = "run";
(int r) addg(int x) { r = x + g; }
trace(addg(1), prefix);
