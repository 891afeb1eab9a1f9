// stdin=, stdout= and stderr= redirections.
type file;
app (file o, file e) filter(file i) {
    sh "-c" "tr a-z A-Z; echo warned >&2" stdin=@i stdout=@o stderr=@e;
}
file src <"data/004-in.txt">;
file out <"004-stdin-stdout-stderr.out">;
file err <"004-err.txt">;
(out, err) = filter(src);
