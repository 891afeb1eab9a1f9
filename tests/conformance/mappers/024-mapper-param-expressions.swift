type file;
app (file o) greet(string m) { echo m stdout=@o; }
string base = "run";
file f[] <simple_mapper; prefix=strcat(base, "_"), suffix=".log">;
f[0] = greet("x");
trace(@f[0]);
