// FieldAndValue (FV): one "path = value" line per leaf, read back with read(..., "FV").
import "stdlib.v2";
type file;
type pt { string a; int b; float c; boolean d; }

pt[] s;
s[0].a = "First"; s[0].b = 1; s[0].c = 1.1; s[0].d = true;
s[1].a = "Second"; s[1].b = 2; s[1].c = 2.1; s[1].d = false;
file f <"s.fv">;
f = write(s, format = "FV");
pt[] t = read(f, format = "FieldAndValue");
assertEqual(length(t), 2);
foreach i in [0:1] {
  assertEqual(s[i].a, t[i].a);
  assertEqual(s[i].b, t[i].b);
  assertEqual(s[i].c, t[i].c);
  assertEqual(s[i].d, t[i].d);
}
trace(t[1].a, t[1].c);
