type file;
type inner {
  file links;
  file rechts;
}
type outer {
  file eerste;
  inner derde;
};
(file t) write (string s) {
  app {
    echo s stdout=@filename(t);
  }
}
outer outfiles <ext; exec="./161-mapper.sh">;
outfiles.eerste = write("1st");
outfiles.derde.links = write("3l");
outfiles.derde.rechts = write("3r");
