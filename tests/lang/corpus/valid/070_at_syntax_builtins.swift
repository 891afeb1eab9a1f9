type file;
file f <"f.txt">;
string a = @strcat("a", "b");
string b = @filename(f);
string c = @f;
string d = filename(f);
int e = @toInt("3");
trace(a, b, c, d, e);
