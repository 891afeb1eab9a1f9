int n = 3;
string s = "n=" + n + ", half=" + (n / 2) + ", sq=" + n * n;
trace(s);
