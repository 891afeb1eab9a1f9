type file;
app (file o) cp(file i) { cp @i filename(i) @filename(i) @(i) @o; }
file i <"i">;
file o <"o"> = cp(i);
