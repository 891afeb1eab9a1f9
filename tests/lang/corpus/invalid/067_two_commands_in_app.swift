// expect: 5:3: an app procedure runs exactly one command; found a second one ('touch')
type file;
app (file a, file b) two () {
  touch @a;
  touch @b;
}
file x <"a.txt">;
file y <"b.txt">;
(x, y) = two();
