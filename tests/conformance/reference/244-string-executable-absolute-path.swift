type file;
app (file o) hello () {
  "/bin/echo" "absolute" stdout=@o;
}
file o <"244-string-executable-absolute-path.out">;
o = hello();
