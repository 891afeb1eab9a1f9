type file;
app (file o) greet(string m) { echo m stdout=@o; }
file f[] <fixed_array_mapper; files="one.txt two.txt">;
f[0] = greet("1");
f[1] = greet("2");
