type file;
app (file o) greet(string m) { echo m stdout=@o; }
file a[] <SimpleMapper; prefix="cam", suffix=".txt">;
file b[] <simple_mapper; prefix="snk", suffix=".txt">;
a[1] = greet("a");
b[1] = greet("b");
trace(@a[1], @b[1]);
