type file;
file outfile[] <simple_mapper; prefix="x.", suffix=".out", padding=4>;
file out2[] <SimpleMapper; location="outdir", prefix="foo", suffix=".txt", separator="_">;
foreach i in [0:3] {
    outfile[i] = make(i);
}
app (file o) make(int i) { echo i stdout=@o; }
