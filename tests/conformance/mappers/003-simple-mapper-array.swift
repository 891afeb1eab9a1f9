type file;
app (file o) greet(string m) { echo m stdout=@o; }
file outfile[] <simple_mapper; prefix="baz", suffix=".txt", padding=2>;
outfile[0] = greet("hello");
outfile[1] = greet("middle");
outfile[2] = greet("goodbye");
