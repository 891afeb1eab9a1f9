type file;
app (file o) cat(file i) { "/bin/cat" @i stdout=@o; }
app (file o) f() { "false" stdout=@o; }
file i <"in.txt">;
file o <"out.txt"> = cat(i);
