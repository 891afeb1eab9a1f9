type file;
file f <"028-data.txt">;
tracef("file is %M\n", f);
