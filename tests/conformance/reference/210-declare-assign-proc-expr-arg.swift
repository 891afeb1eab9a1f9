type messagefile {}
(messagefile t) greeting(int i) {
    app {
        echo i stdout=@filename(t);
    }
}
messagefile outfile = greeting(3 + 2);
string s = readData(outfile);
trace(s);
