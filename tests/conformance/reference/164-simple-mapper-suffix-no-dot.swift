type messagefile;
(messagefile t) write() {
  app {
    echo "x" stdout=@filename(t);
  }
}
messagefile outfile <simple_mapper; prefix="164-nosuffix", suffix="_nodot.out">;
outfile = write();
