type file;
app (file o) greet(string m) { echo m stdout=@o; }
file outs[] <Ext; exec="gen.sh", prefix="r_", n=2>;
foreach i in [0:2] {
  outs[i] = greet(toString(i));
}
trace(filenames(outs));
