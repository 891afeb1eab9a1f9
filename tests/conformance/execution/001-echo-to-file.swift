// An app writes its stdout to a mapped file.
type file;
app (file o) greet(string who) {
    echo "hello" who stdout=@o;
}
file out <"001-echo-to-file.out">;
out = greet("world");
