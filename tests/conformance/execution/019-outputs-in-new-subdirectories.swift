// Outputs mapped into directories that do not exist yet are put there (the directories
// are made), and stdout/stderr redirections may name them too.
type file;
app (file o, file e) both(string s) { sh "-c" "echo $0; echo err $0 >&2" s stdout=@o stderr=@e; }
file o <"019-out/a/b/o.txt">;
file e <"019-out/c/e.txt">;
(o, e) = both("deep");
