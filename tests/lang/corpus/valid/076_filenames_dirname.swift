type file;
file fs[] <filesys_mapper; pattern="*.txt">;
string names[] = filenames(fs);
string d = dirname(fs[0]);
trace(names[0], d);
