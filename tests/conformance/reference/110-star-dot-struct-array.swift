type astruct {
  string a;
  string b;
};
astruct foo[];
foo[0].a = "zero-A";
foo[0].b = "zero-B";
foo[1].a = "one-A";
foo[1].b = "one-B";
foo[2].a = "two-A";
foo[2].b = "two-B";
string s[] = foo[*].b;
trace(s[2]);
string t[] = foo.a;
trace(t);
