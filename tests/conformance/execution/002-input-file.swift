// A mapped input file is present in the job directory at the same relative path.
type file;
app (file o) copy(file i) {
    cat @i stdout=@o;
}
file src <"data/002-input.txt">;
file out <"002-input-file.out">;
out = copy(src);
