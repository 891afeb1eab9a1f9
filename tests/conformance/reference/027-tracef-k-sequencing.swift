type file;
app (external e) work () {
  echo "working";
}
external done;
done = work();
tracef("%kfinished\n", done);
