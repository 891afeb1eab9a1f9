type file;
app (file o) greet (string s) {
  echo s stdout=@o;
}
file fa[] <simple_mapper; prefix="014-fa", suffix=".txt">;
fa[0] = greet("a");
fa[1] = greet("b");
trace(fa);
