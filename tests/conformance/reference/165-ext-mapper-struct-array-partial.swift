type messagefile;
type cols {
  messagefile l;
  messagefile r;
}
(messagefile t) write (string s) {
  app {
    echo s stdout=@filename(t);
  }
}
cols outfile[] <ext; exec="./165-mapper.sh">;
outfile[0].l = write("slot 0");
outfile[1].r = write("slot 1");
