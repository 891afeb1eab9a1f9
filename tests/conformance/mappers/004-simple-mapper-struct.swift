type file;
app (file o) greet(string m) { echo m stdout=@o; }
type mystruct { file left; file right; }
mystruct out <simple_mapper; prefix="qux", suffix=".txt">;
out.left = greet("hello");
out.right = greet("goodbye");
trace(@out.left, @out.right);
