type file;
type pair { file left; file right; }
type nest { pair p; }
app (file o) mk () {
  touch @o;
}
pair ps[] <simple_mapper; prefix="341-ps.", suffix=".txt">;
nest n <simple_mapper; prefix="341-n.", suffix=".txt">;
ps[2].right = mk();
n.p.left = mk();
