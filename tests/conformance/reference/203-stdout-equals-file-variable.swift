type file;
(file f) echo (string s) {
  app {
    echo s stdout=f;
  }
}
file o <"203-stdout-equals-file-variable.out">;
o = echo("direct");
