app (external e) step (string name) {
  echo name;
}
(external e) pipeline () {
  external a = step("a");
  e = after(a);
}
app (external e) after (external x) {
  echo "after";
}
external fin = pipeline();
tracef("%kpipeline finished\n", fin);
