type file;
file f[] <simple_mapper; prefix="in", suffix=".txt">;
trace(length(f));
trace(filenames(f));
