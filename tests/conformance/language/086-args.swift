string n = arg("name", "nobody");
int k = toInt(arg("k"));
trace(n, k + 1);
