// THIS-SCRIPT-SHOULD-FAIL (Swift 0.96 allows exactly one command in an app body)
type file;
app (file a, file b) two () {
  touch @a;
  touch @b;
}
file x <"178-a.txt">;
file y <"178-b.txt">;
(x, y) = two();
