type file;
app (external e) work (int i) {
  sleep i;
}
app (file o) finish (external deps[]) {
  echo "all done" stdout=@o;
}
external done[];
foreach i in [0:2] {
  done[i] = work(i %% 2);
}
file o <"327-external-array-barrier.out">;
o = finish(done);
