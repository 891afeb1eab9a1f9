type file;
app (file o) copy (file i) {
  cat @i stdout=@o;
}
file i <"141-data/input.txt">;
file o <"141-input-in-subdir.out">;
o = copy(i);
