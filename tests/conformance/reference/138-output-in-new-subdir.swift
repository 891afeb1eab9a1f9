type file;
app (file o) hello () {
  echo "hi" stdout=@o;
}
file o <"138-outdir/deeper/hello.txt">;
o = hello();
