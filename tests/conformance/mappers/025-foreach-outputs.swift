type file;
app (file o) greet(string m) { echo m stdout=@o; }
file outs[] <simple_mapper; prefix="o", suffix=".txt">;
foreach i in [0:4] {
  outs[i] = greet(strcat("n", i));
}
trace(length(outs));
