type messagefile;
(messagefile t) greeting(string m) {
    app {
        echo m stdout=@filename(t);
    }
}
messagefile outfile <"hello.txt">;
outfile = greeting("hi");
