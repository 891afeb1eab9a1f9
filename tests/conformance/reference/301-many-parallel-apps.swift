type file;
app (file o) square (int i) {
  sh "-c" "echo $(($0 * $0))" i stdout=@o;
}
file outs[] <simple_mapper; prefix="301-sq", suffix=".txt">;
foreach i in [0:19] {
  outs[i] = square(i);
}
int vals[];
foreach f, i in outs {
  vals[i] = readData(f);
}
int total = vals[19] + vals[10];
trace(total, length(vals));
