type file;
string names[] = ["342-x.txt", "342-y.txt"];
file fs[] <fixed_array_mapper; files=names>;
trace(@fs[1], length(fs));
