(string r) join2 (string a, string b = "-") {
  r = a + b;
}
trace(join2(a = "x", b = "y"), join2("z"));
