type file;
app (file[] o) split (file i) {
  split "-l" 1 filename(i) "162-seqout.";
}
file[] out <FixedArrayMapper; files="162-seqout.aa, 162-seqout.ab, 162-seqout.ac">;
file input <"162-in.txt">;
out = split(input);
