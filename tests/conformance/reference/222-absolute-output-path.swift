type file;
app (file o) copy (file i) {
  cp @i @o;
}
file f1 <"222-input.txt">;
file f2 <"/tmp/swiftnb-hunter-222-output.txt">;
f2 = copy(f1);
