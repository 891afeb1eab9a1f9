type file;
file frames[] <filesys_mapper; pattern="*.jpg">;
file more[] <FilesysMapper; location="in", prefix="a", suffix=".txt">;
foreach f, ix in frames { trace(@f, ix); }
