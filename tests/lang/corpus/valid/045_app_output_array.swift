type file;
app (file outs[]) split(file i) { split "-l" 1 @i "part"; }
file parts[] <filesys_mapper; prefix="part">;
file i <"input.txt">;
parts = split(i);
