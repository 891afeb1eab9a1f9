type file;
file fs[] <fixed_array_mapper; files="a.txt b.txt c.txt">;
trace(filename(fs));
trace(filenames(fs));
