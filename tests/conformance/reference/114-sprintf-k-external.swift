app (external e) nap (int i) {
  sleep i;
}
(string t) mkstring (string s, int i, external e) {
  t = sprintf("%s: %i%k", s, i, e);
}
foreach i in [1:3] {
  int delay = i %% 2;
  external e1 = nap(delay);
  string s1 = mkstring("delayed", delay, e1);
  tracef("%s\n", s1);
}
tracef("%s\n", sprintf("ready"));
