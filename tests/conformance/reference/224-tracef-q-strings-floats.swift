string s[] = ["a", "b"];
float f[] = [1.5, 2.0];
tracef("%q %q\n", s, f);
