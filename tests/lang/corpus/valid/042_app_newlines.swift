type file;
app (file o) multi(string a, string b) {
    echo
        a
        b
        stdout=@filename(o);
}
file o = multi("x", "y");
