type file;
app (file o) catall(file i[]) { cat @filenames(i) stdout=@o; }
file ins[] <filesys_mapper; pattern="part*.txt">;
file o <"028-filesys-cat-all.out"> = catall(ins);
