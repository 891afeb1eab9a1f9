type file;
app (file o) simulate (int step, float scale) {
  echo "step" step "scale" scale stdout=@o;
}
app (file o) combine (file parts[]) {
  cat @filenames(parts) stdout=@o;
}
int n = toInt(arg("n", "2"));
float scale = toFloat(arg("scale", "1.5"));
file parts[];
foreach i in [1:n] {
  file out <single_file_mapper; file=strcat("259-out/part-", i, ".txt")>;
  out = simulate(i, scale);
  parts[i] = out;
}
file all <"259-param-sweep-with-args.out">;
all = combine(parts);
