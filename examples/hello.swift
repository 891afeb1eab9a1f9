// The first example of the Swift User Guide: one app call writing one file.
type messagefile;

app (messagefile t) greeting() {
    echo "Hello, world!" stdout=filename(t);
}

messagefile outfile <"hello.txt">;

outfile = greeting();
