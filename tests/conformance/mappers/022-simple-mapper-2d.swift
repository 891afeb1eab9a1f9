type file;
app (file o) greet(string m) { echo m stdout=@o; }
file f[][] <simple_mapper; prefix="m", suffix=".txt">;
f[1][2] = greet("x");
trace(@f[1][2]);
