type file;
app (file o) catall(file inputs[]) { cat @filenames(inputs) stdout=@o; }
file ins[] <filesys_mapper; pattern="*.txt">;
file all <"all.txt"> = catall(ins);
