type messagefile;
(messagefile t) write() {
  app {
    echo @filename(t) stdout=@filename(t);
  }
}
string fn = "163-named";
messagefile outfile <simple_mapper; prefix=fn, suffix=".out">;
outfile = write();
