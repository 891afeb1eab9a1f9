// File names with spaces, quotes and ';' reach the app as single argv words.
type file;
app (file o) copy(file i) {
    cp @i @o;
}
file src <"data/in put; 'q'.txt">;
file out <"out put; rm -rf data.txt">;
out = copy(src);
