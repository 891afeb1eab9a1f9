type file;
app (file o) mk () {
  sh "-c" "mkdir -p $(dirname $0) && echo deep > $0" @o;
}
file o <"353-nested/dir/out.txt">;
o = mk();
