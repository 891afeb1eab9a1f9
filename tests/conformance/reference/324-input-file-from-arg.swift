type file;
app (file o) count (file i) {
  wc "-l" stdin=@i stdout=@o;
}
file input <single_file_mapper; file=@arg("in")>;
file output <single_file_mapper; file=@arg("out", "324-default.out")>;
output = count(input);
