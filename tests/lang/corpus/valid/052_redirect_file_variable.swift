type file;
app (file o) f(file i) { cat stdin=i stdout=o; }
