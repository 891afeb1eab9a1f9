type file;
app (file o) gen(int i) { echo i stdout=@o; }
file outs[];
foreach i in [0:9] {
    if (i %% 2 == 0) {
        outs[i] = gen(i);
    }
}
