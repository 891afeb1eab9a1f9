// User Guide 8.2-8.4
type file;
file f <"n.txt">;
int n = @extractInt(f);
string one = @filename(f);
string many[] = @filenames(f);
