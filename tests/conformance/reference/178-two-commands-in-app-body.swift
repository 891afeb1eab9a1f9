// Two commands in an app body (0.96 allowed one; Swift/K trunk runs both, in order)
type file;
app (file a, file b) two () {
  touch @a;
  touch @b;
}
file x <"178-a.txt">;
file y <"178-b.txt">;
(x, y) = two();
