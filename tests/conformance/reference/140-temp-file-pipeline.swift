type file;
app (file o) gen (int n) {
  seq n stdout=@o;
}
app (file o) count (file i) {
  wc "-l" stdin=@i stdout=@o;
}
file tmp;
tmp = gen(5);
file result <"140-temp-file-pipeline.out">;
result = count(tmp);
