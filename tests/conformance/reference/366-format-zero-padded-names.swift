type file;
app (file o) put (int i) {
  echo i stdout=@o;
}
foreach i in [7:8] {
  file o <single_file_mapper; file=format("366-frame-%04d.txt", i)>;
  o = put(i);
}
trace(format("%04d|%-4s|%x", 7, "ab", 255));
