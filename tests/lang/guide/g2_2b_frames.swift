// User Guide 2.2: filesys_mapper and foreach (the fragment's closing brace and
// declarations completed)
type file;
app (file o) rotate(file i, int angle) { convert "-rotate" angle @i @o; }
file frames[] <filesys_mapper; pattern="*.jpg">;
file output[];
foreach f,ix in frames { output[ix] = rotate(f, 180); }
