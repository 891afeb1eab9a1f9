type file;
type result { file data; file log; }
app (file d, file l) run (int i) {
  sh "-c" "echo data $0; echo log $0 1>&2" i stdout=@d stderr=@l;
}
result rs[] <simple_mapper; prefix="352-r", suffix=".txt">;
foreach i in [0:1] {
  (rs[i].data, rs[i].log) = run(i);
}
