// User Guide 2.10.2: compound procedure (the guide's comments restored to their lines)
type type1; type type2; type type3;
app (type3 o) foo(type1 i) { foo @i @o; }
app (type2 o) bar(type3 i) { bar @i @o; }
(type2 b) foo_bar (type1 a) { type3 c; c = foo(a); // c holds the result of foo
b = bar(c); // c is an input to bar
}
