type file;
app (file o) copy (file i) {
  cat stdin=@i stdout=@o;
}
file i <"300 input file.txt">;
file o <"300-input-with-space-in-name.out">;
o = copy(i);
