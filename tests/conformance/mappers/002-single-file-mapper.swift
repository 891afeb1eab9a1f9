type file;
app (file o) greet(string m) { echo m stdout=@o; }
file f <single_file_mapper; file="002-single-file-mapper.out">;
f = greet("x");
trace(@f);
