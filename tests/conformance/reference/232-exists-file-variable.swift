type file;
file f <"232-here.txt">;
trace(exists(filename(f)));
