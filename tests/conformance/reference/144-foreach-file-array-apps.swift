type file;
app (file o) up (file i) {
  tr "a-z" "A-Z" stdin=@i stdout=@o;
}
app (file o) catall (file ins[]) {
  cat @filenames(ins) stdout=@o;
}
file inputs[] <filesys_mapper; prefix="144-in", suffix=".txt">;
file outputs[] <simple_mapper; prefix="144-up", suffix=".txt">;
foreach f, i in inputs {
  outputs[i] = up(f);
}
file all <"144-foreach-file-array-apps.out">;
all = catall(outputs);
