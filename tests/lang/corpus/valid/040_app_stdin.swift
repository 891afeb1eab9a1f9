type file;
app (file o) sortit(file i) { sort stdin=@i stdout=@o; }
file i <"in.txt">;
file o <"sorted.txt">;
o = sortit(i);
