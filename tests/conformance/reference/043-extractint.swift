type file;
app (file o) seven () {
  echo "7" stdout=@o;
}
file f = seven();
int n = extractInt(f);
trace(n * 6);
