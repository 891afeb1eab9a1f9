type file;
app (file t) echo (string m) {
  echo m stdout=@filename(t);
}
file f1 <"160-base.in">;
string fn = @filename(f1);
file o <single_file_mapper; file=@strcat(fn, ".out")>;
o = echo(fn);
