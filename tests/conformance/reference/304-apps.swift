type file;
app (file o) shout (string s) {
  sh "-c" "echo $0 | tr a-z A-Z" s stdout=@o;
}
