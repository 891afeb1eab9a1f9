type file;
app (file o) init () {
  echo "0" stdout=@o;
}
app (file o) inc (file i) {
  sh "-c" "echo $(( $(cat $0) + 1 ))" @i stdout=@o;
}
file stages[] <simple_mapper; prefix="323-stage", suffix=".txt">;
stages[0] = init();
foreach k in [1:4] {
  stages[k] = inc(stages[k - 1]);
}
int last = readData(stages[4]);
trace(last);
