// Twenty app calls from a foreach, each to its own mapped file.
type file;
app (file o) num(int i) {
    echo i stdout=@o;
}
file f[] <simple_mapper; location="nums", prefix="n", suffix=".txt">;
foreach i in [1:20] {
    f[i] = num(i);
}
