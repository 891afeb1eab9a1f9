type file;
file texts[] <filesys_mapper; prefix="foo", suffix=".txt">;
trace(filenames(texts));
