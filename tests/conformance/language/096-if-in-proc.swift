(string r) sign(int x) { if (x < 0) { r = "neg"; } else { if (x == 0) { r = "zero"; } else { r = "pos"; } } }
trace(sign(-2), sign(0), sign(3));
