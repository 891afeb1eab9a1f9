type file;
app (file o) gen () {
  seq 3 stdout=@o;
}
file f = gen();
int v[] = readData(f);
trace(v);
