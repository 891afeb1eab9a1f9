type messagefile;
(messagefile e, messagefile t) greeting(messagefile i) {
    app {
        sh "-c" "cat; echo oops 1>&2" stdin=@filename(i) stderr=@filename(e) stdout=@filename(t);
    }
}
messagefile infile <"194-test.in">;
messagefile outfile <"194-stdin-stderr-stdout-together.out">;
messagefile errfile <"194-test.err">;
(errfile, outfile) = greeting(infile);
