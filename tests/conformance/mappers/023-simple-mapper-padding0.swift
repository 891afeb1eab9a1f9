type file;
app (file o) greet(string m) { echo m stdout=@o; }
file f[] <simple_mapper; prefix="p", suffix=".txt", padding=0>;
f[7] = greet("x");
f[12] = greet("y");
trace(@f[7], @f[12]);
