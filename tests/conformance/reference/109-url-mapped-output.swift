type messagefile;
(messagefile t) greeting() {
    app {
        echo "hello" stdout=@filename(t);
    }
}
messagefile outfile <"file://localhost/109-url-mapped-output.out">;
outfile = greeting();
