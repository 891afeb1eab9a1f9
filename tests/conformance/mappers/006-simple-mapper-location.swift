type file;
app (file o) greet(string m) { echo m stdout=@o; }
file a[] <simple_mapper; location="outdir", prefix="a", suffix=".dat">;
a[3] = greet("three");
trace(@a[3]);
