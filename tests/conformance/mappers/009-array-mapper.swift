type file;
string s[] = ["a.txt", "b.txt", "c.txt"];
file f[] <array_mapper; files=s>;
trace(filenames(f));
trace(length(f));
