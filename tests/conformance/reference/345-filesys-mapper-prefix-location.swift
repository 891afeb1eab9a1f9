type file;
file fs[] <filesys_mapper; location="345-dir", prefix="job", suffix=".log">;
trace(length(fs), @fs[0]);
