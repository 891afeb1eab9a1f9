(int first, string second) two() { first = 1; second = "two"; }
(string s = second, int i = first) = two();
trace(s, i);
