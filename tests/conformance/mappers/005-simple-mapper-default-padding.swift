type file;
app (file o) greet(string m) { echo m stdout=@o; }
file outfile[] <simple_mapper; prefix="x.", suffix=".out">;
outfile[5] = greet("five");
trace(filename(outfile[5]));
