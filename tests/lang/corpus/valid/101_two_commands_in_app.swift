// several commands in one app body run in order (Swift/K trunk)
type file;
app (file a, file b) two () {
  touch @a;
  touch @b;
}
file x <"a.txt">;
file y <"b.txt">;
(x, y) = two();
