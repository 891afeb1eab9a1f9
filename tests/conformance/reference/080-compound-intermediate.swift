type file;
app (file o) first (file i) {
  sed "s/a/b/" @i stdout=@o;
}
app (file o) second (file i) {
  sed "s/b/c/" @i stdout=@o;
}
(file output) process (file input) {
  file intermediate;
  intermediate = first(input);
  output = second(intermediate);
}
file x <"080-x.txt">;
file y <"080-compound-intermediate.out">;
y = process(x);
