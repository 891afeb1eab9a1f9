// The AIMES experiment's bag of tasks: N independent `sleep d` calls.
//   swiftnb whatif -model model.json -config stampede.conf bag_of_tasks.swift -N=256 -sleep=900
int N = toInt(arg("N", "8"));
int d = toInt(arg("sleep", "900"));

app sleep (int t) {
  sleep t;
}

foreach i in [1:N] {
  sleep(d);
}
