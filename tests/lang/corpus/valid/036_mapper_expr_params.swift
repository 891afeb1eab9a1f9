type file;
int i = 3;
file f <single_file_mapper; file=strcat("sorted.", i, ".txt")>;
file g <simple_mapper; prefix=@strcat("p", i), suffix=".txt">;
string name = "abc";
file h <single_file_mapper; file=name>;
